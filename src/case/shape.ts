/**
 * The case schema as plain data, so that reading a valid case need not load zod (40 ms of a
 * one-case audit's start-up). src/case/schema.ts stays the one definition: the build reads its
 * zod definitions (shape-build.ts) and writes them as source, src/case/defs.generated.ts,
 * before compiling (see defs.ts).
 * Every node keeps zod's own layout (`_zod.def`, `description`), so code that reads the
 * schema's definitions (src/facts/facts.ts) reads these the same way.
 *
 * conformTo answers only "certainly valid, and this is what zod would return" or "ask zod":
 * a construct or a check it does not know (a refinement, a format, a default) is "ask zod",
 * and so is every invalid value, whose message then comes from the zod path unchanged.
 */

export interface ShapeCheck {
  check: string;
  [k: string]: unknown;
}

export interface ShapeDef {
  type: string;
  shape?: Record<string, ShapeNode>;
  catchall?: ShapeNode;
  innerType?: ShapeNode;
  options?: ShapeNode[];
  element?: ShapeNode;
  keyType?: ShapeNode;
  valueType?: ShapeNode;
  values?: unknown[];
  entries?: Record<string, string | number>;
  checks?: ShapeCheck[];
  /** Definition fields the snapshot did not copy (their meaning is zod's to apply). */
  unread?: string[];
}

export interface ShapeNode {
  _zod: { def: ShapeDef };
  description?: string;
}


const NO: unique symbol = Symbol('ask zod');

const isRecordLike = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

// Made once per schema node, not once per value checked.
const patterns = new WeakMap<ShapeCheck, RegExp>();

function checksPass(checks: ShapeCheck[] | undefined, v: string | number | unknown[]): boolean {
  if (!checks) return true;
  for (const c of checks) {
    switch (c.check) {
      case 'number_format':
        if (c.format !== 'safeint' || !Number.isSafeInteger(v)) return false;
        break;
      case 'greater_than':
        if (typeof v !== 'number' || typeof c.value !== 'number' || !(c.inclusive === true ? v >= c.value : v > c.value)) return false;
        break;
      case 'less_than':
        if (typeof v !== 'number' || typeof c.value !== 'number' || !(c.inclusive === true ? v <= c.value : v < c.value)) return false;
        break;
      case 'min_length':
        if (typeof v === 'number' || typeof c.minimum !== 'number' || v.length < c.minimum) return false;
        break;
      case 'max_length':
        if (typeof v === 'number' || typeof c.maximum !== 'number' || v.length > c.maximum) return false;
        break;
      case 'string_format': {
        const p = c.pattern as { source?: unknown; flags?: unknown } | undefined;
        if (c.format !== 'regex' || typeof v !== 'string' || typeof p?.source !== 'string' || typeof p.flags !== 'string' || /[gy]/.test(p.flags)) return false;
        let re = patterns.get(c);
        if (!re) patterns.set(c, (re = new RegExp(p.source, p.flags)));
        if (!re.test(v)) return false;
        break;
      }
      default:
        return false; // a refinement or a check this reader does not know: zod decides
    }
  }
  return true;
}

type Conform = (v: unknown) => unknown;

// Each schema node is turned once into a function that checks a value against it (what zod would
// return, or NO), so a case is checked by direct calls instead of a walk that reads the
// definitions again for every value (a third of the time the check took).
const compiled = new WeakMap<ShapeNode, Conform>();

/** The check of `node`: what zod would return for a value, or NO when it is invalid or zod has to decide. */
function compile(node: ShapeNode): Conform {
  const known = compiled.get(node);
  if (known) return known;
  // Registered before its parts are compiled, so a node reached again through itself finds it.
  let built: Conform | undefined;
  compiled.set(node, (v) => built!(v));
  built = build(node);
  compiled.set(node, built);
  return built;
}

function build(node: ShapeNode): Conform {
  const d = node._zod.def;
  if (d.unread) return () => NO;
  switch (d.type) {
    case 'optional': {
      const inner = compile(d.innerType!);
      return (v) => (v === undefined ? undefined : inner(v));
    }
    case 'nullable': {
      const inner = compile(d.innerType!);
      return (v) => (v === null ? null : inner(v));
    }
    case 'literal': {
      const values = d.values!;
      return (v) => (values.includes(v) ? v : NO);
    }
    case 'enum': {
      const values = new Set<unknown>(Object.values(d.entries!));
      return (v) => (values.has(v) ? v : NO);
    }
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? v : NO);
    case 'string': {
      const checks = d.checks;
      return (v) => (typeof v === 'string' && checksPass(checks, v) ? v : NO);
    }
    case 'number': {
      const checks = d.checks;
      return (v) => (typeof v === 'number' && Number.isFinite(v) && checksPass(checks, v) ? v : NO);
    }
    case 'union': {
      const options = d.options!.map(compile);
      return (v) => {
        for (const option of options) {
          const r = option(v);
          if (r !== NO) return r;
        }
        return NO;
      };
    }
    case 'array': {
      const checks = d.checks;
      const element = compile(d.element!);
      return (v) => {
        if (!Array.isArray(v) || !checksPass(checks, v)) return NO;
        const out: unknown[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const r = element(v[i]);
          if (r === NO) return NO;
          out[i] = r;
        }
        return out;
      };
    }
    case 'object': {
      // Only strict objects: zod strips unknown keys from others, which is zod's to do.
      if (d.checks?.length || d.catchall?._zod.def.type !== 'never') return () => NO;
      const shape = d.shape!;
      // In the schema's key order, as zod builds its result.
      const keys = Object.keys(shape);
      const parts = keys.map((k) => compile(shape[k]!));
      return (v) => {
        if (!isRecordLike(v)) return NO;
        for (const k of Object.keys(v)) if (!Object.hasOwn(shape, k)) return NO;
        const out: Record<string, unknown> = {};
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i]!;
          const has = Object.hasOwn(v, k);
          const r = parts[i]!(has ? v[k] : undefined);
          if (r === NO) return NO;
          if (has) out[k] = r;
        }
        return out;
      };
    }
    case 'record': {
      const key = d.keyType!._zod.def;
      if (key.type !== 'string' || key.checks?.length || d.checks?.length) return () => NO;
      const value = compile(d.valueType!);
      return (v) => {
        if (!isRecordLike(v)) return NO;
        const out: Record<string, unknown> = {};
        for (const k of Object.keys(v)) {
          if (k === '__proto__') return NO;
          const r = value(v[k]);
          if (r === NO) return NO;
          out[k] = r;
        }
        return out;
      };
    }
    default:
      return () => NO;
  }
}

/** `value` as zod would return it from the schema `shape`, or undefined when zod has to decide. */
export function conformTo(shape: ShapeNode, value: unknown): unknown {
  const r = compile(shape)(value);
  return r === NO ? undefined : r;
}
