import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { expandCasePaths } from '../../src/case/load.js';
import { parseCase } from '../../src/case/parse.js';
import { parseYaml, parseYamlFast } from '../../src/yamlfile.js';

// parseCase reads well-formed files through js-yaml and everything else through the positioned
// yaml document. The two must never disagree about what a file says.
const root = path.resolve(import.meta.dirname, '../..');

describe('the fast YAML path', () => {
  it('gives the same value as the positioned parser on every shipped case and rule file', async () => {
    const files = [...(await expandCasePaths([path.join(root, 'cases')])), ...(await expandCasePaths([path.join(root, 'rules')]))];
    let fast = 0;
    for (const f of files) {
      const text = await readFile(f, 'utf8');
      const v = parseYamlFast(text, 'file', f);
      if (v === undefined) continue;
      fast++;
      expect([f, v]).toEqual([f, parseYaml(text, f, 'file').value]);
    }
    expect(fast).toBeGreaterThan(files.length / 2); // the fast path is really taken
  });

  it('agrees with the positioned parser on generated YAML of case-like values', () => {
    const scalar = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.string(), fc.constantFrom('unknown', 'ok', '0x10', '010', '1e3', 'yes', 'no', '~', 'null', 'true', '.inf', '-0'));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), tie('node'), { maxKeys: 4 })),
    })).node;
    fc.assert(
      fc.property(value, fc.boolean(), (v, flow) => {
        const text = stringify({ format: 'x', v }, { collectionStyle: flow ? 'flow' : 'block' });
        const fast = parseYamlFast(text, 'file', 'g.yaml');
        if (fast !== undefined) expect(fast).toEqual(parseYaml(text, 'g.yaml', 'file').value);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves anchors, aliases and tags to the positioned parser (its alias budget applies)', () => {
    expect(parseYamlFast('a: &x 1\nb: *x\n', 'file', 'a.yaml')).toBeUndefined();
    expect(parseYamlFast('a: !!str 1\n', 'file', 'a.yaml')).toBeUndefined();
  });

  it('leaves a flow map whose closing brace sits in a comment to the positioned parser', () => {
    // Found by npm run fuzz (seed 831494922): js-yaml read these, the yaml library refuses them.
    for (const text of ['when:\n  all:\n    - { fact: a, operator: greaterThan, value: 0 }\n    - { #: probe.registered, operator: equal, value: true }\n   e }\n    - { fact: b, operator: equal, value: true }\n', 'when:\n  all:\n    - { fact: c, operator: greaterThan, #value: 1 }\n   e: 1 }\n    - { fact: d, operator: notEqual, value: x }\n']) {
      expect(() => parseYaml(text, 'r.yaml', 'file')).toThrow();
      expect(parseYamlFast(text, 'file', 'r.yaml')).toBeUndefined();
    }
    // A comment after a flow map that closes on its line changes nothing.
    expect(parseYamlFast('a: { b: 1 } # fine\n', 'file', 'r.yaml')).toEqual({ a: { b: 1 } });
  });

  it('gives the same case either way, and positions only on the slow path', () => {
    const text = 'format: kretprobe-case/v1\nid: same\nledger: { eligible: 3, returns: 2 }\n';
    const a = parseCase(text, 'a.yaml');
    const b = parseCase(`${text}# &not-an-anchor\n`, 'b.yaml');
    expect(a.data).toEqual({ ...b.data });
    expect(a.yaml.doc.toJS()).toMatchObject({ id: 'same' });
  });
});
