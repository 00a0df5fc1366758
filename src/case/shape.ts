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
const enumValues = new WeakMap<ShapeDef, Set<unknown>>();

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

/** What zod would return for `v`, or NO when `v` is invalid or zod has to decide. */
function conform(node: ShapeNode, v: unknown): unknown {
  const d = node._zod.def;
  if (d.unread) return NO;
  switch (d.type) {
    case 'optional':
      return v === undefined ? undefined : conform(d.innerType!, v);
    case 'nullable':
      return v === null ? null : conform(d.innerType!, v);
    case 'literal':
      return d.values!.includes(v) ? v : NO;
    case 'enum': {
      let values = enumValues.get(d);
      if (!values) enumValues.set(d, (values = new Set(Object.values(d.entries!))));
      return values.has(v) ? v : NO;
    }
    case 'boolean':
      return typeof v === 'boolean' ? v : NO;
    case 'string':
      return typeof v === 'string' && checksPass(d.checks, v) ? v : NO;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) && checksPass(d.checks, v) ? v : NO;
    case 'union':
      for (const option of d.options!) {
        const r = conform(option, v);
        if (r !== NO) return r;
      }
      return NO;
    case 'array': {
      if (!Array.isArray(v) || !checksPass(d.checks, v)) return NO;
      const out: unknown[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const r = conform(d.element!, v[i]);
        if (r === NO) return NO;
        out[i] = r;
      }
      return out;
    }
    case 'object': {
      // Only strict objects: zod strips unknown keys from others, which is zod's to do.
      if (!isRecordLike(v) || d.checks?.length || d.catchall?._zod.def.type !== 'never') return NO;
      const shape = d.shape!;
      for (const k of Object.keys(v)) if (!Object.hasOwn(shape, k)) return NO;
      const out: Record<string, unknown> = {};
      // In the schema's key order, as zod builds its result.
      for (const k of Object.keys(shape)) {
        const has = Object.hasOwn(v, k);
        const r = conform(shape[k]!, has ? v[k] : undefined);
        if (r === NO) return NO;
        if (has) out[k] = r;
      }
      return out;
    }
    case 'record': {
      const key = d.keyType!._zod.def;
      if (!isRecordLike(v) || key.type !== 'string' || key.checks?.length || d.checks?.length) return NO;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) {
        if (k === '__proto__') return NO;
        const r = conform(d.valueType!, v[k]);
        if (r === NO) return NO;
        out[k] = r;
      }
      return out;
    }
    default:
      return NO;
  }
}

/** `value` as zod would return it from the schema `shape`, or undefined when zod has to decide. */
export function conformTo(shape: ShapeNode, value: unknown): unknown {
  const r = conform(shape, value);
  return r === NO ? undefined : r;
}
