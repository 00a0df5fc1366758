import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRules, type RuleSet } from '../src/rules/load.js';
import { slug, sourceLink } from '../src/report/sources.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DOCS = path.join(ROOT, 'docs');

/** The anchors a Markdown file offers: its headings' slugs and explicit <a id="..."> targets. */
function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+)$/gm)) out.add(slug(m[1]!));
  for (const m of text.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
  return out;
}
function resolves(link: string): boolean {
  const [file, anchor] = link.split('#');
  return anchors(path.join(ROOT, file!)).has(anchor ?? '');
}

let rules: RuleSet;
beforeAll(async () => {
  rules = await loadRules(path.join(ROOT, 'rules'));
});

describe('docs/ (shipped in the package)', () => {
  it('has the documents findings cite, and a LICENSE', () => {
    expect(readdirSync(DOCS).sort()).toEqual(expect.arrayContaining(['article.md', 'case-format.md', 'kernel-facts.md', 'kernel-history.md', 'kernel-notes.md', 'ledger-format.md']));
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[]; license: string };
    expect(pkg.files).toEqual(expect.arrayContaining(['docs', 'LICENSE']));
    expect(readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')).toMatch(new RegExp(`^${pkg.license} License`));
  });

  it('every rule\'s source points at an anchor that exists in docs/', () => {
    const broken = [...rules.rules, ...rules.claims]
      .map((r) => ({ id: r.spec.id, source: r.spec.source, link: sourceLink(r.spec.source) }))
      .filter((r) => r.link === undefined || !resolves(r.link))
      .map((r) => `${r.id}: ${r.source} -> ${r.link ?? '(no link)'}`);
    expect(broken).toEqual([]);
  });

  it('every relative link between the docs lands on an existing file and anchor', () => {
    const broken: string[] = [];
    for (const name of readdirSync(DOCS).filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(path.join(DOCS, name), 'utf8');
      for (const m of text.matchAll(/\]\(([a-z-]+\.md)(?:#([^)]+))?\)/g)) {
        const target = path.join(DOCS, m[1]!);
        if (!readdirSync(DOCS).includes(m[1]!) || (m[2] && !anchors(target).has(m[2]))) broken.push(`${name}: ${m[0]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('a source that is neither an article section nor a kernel fact has no link', () => {
    expect(sourceLink('somewhere else')).toBeUndefined();
    expect(sourceLink('Read missed and filtered cases separately')).toBe('docs/article.md#read-missed-and-filtered-cases-separately');
  });
});
