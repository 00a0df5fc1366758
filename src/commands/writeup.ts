import { Command } from 'commander';
import path from 'node:path';
import { stringify } from 'yaml';
import type { CommandContext } from './context.js';
import { writeFileAtomic } from '../fsutil.js';
import { loadLexicon, loadWriteup } from '../writeup/index.js';

/** `writeup extract`: the case a write-up states, every fact cited by file:line:col. */
export function writeupCommand(ctx: CommandContext): Command {
  const cmd = new Command('writeup').description('read investigation write-ups (Markdown, text, mail) as cases');
  cmd
    .command('extract')
    .description('extract the case a write-up states: facts from its explicit block, pasted artifacts and sentences, and its claims')
    .argument('<file>', 'a write-up: .md, .markdown, .txt, .eml or mbox text (the content decides)')
    .option('-o, --output <file>', 'write the case here (atomically) instead of stdout; an existing file is refused without --force')
    .option('--force', 'with -o: replace an existing file')
    .option('--rules <dir>', 'rules directory whose lexicon/ to use (default: the shipped rules)')
    .action(async (file: string, opts: { output?: string; rules?: string; force?: boolean }) => {
      const lex = await loadLexicon(opts.rules);
      const { extraction: x } = await loadWriteup(path.resolve(ctx.io.cwd, file), lex);
      const shown = { ...x.case, provenance: Object.fromEntries(Object.entries(x.case.provenance ?? {}).map(([k, v]) => [k, v.replace(path.resolve(ctx.io.cwd, file), file)])) };
      if (shown.claims) shown.claims = shown.claims.map((c) => (c.at ? { ...c, at: c.at.replace(path.resolve(ctx.io.cwd, file), file) } : c));
      const head = [
        `# Extracted by kretprobe-triage writeup extract from ${file} (${x.kind}).`,
        `# provenance: each fact -> file:line:col it was read from (explicit > artifact > sentence); absent facts are unknown.`,
        ...x.conflicts.map((c) => `# DISAGREEMENT ${c.path}: used ${JSON.stringify(c.chosen.value)} (line ${c.chosen.line}), also stated ${c.others.map((o) => `${JSON.stringify(o.value)} (line ${o.line})`).join(', ')}`),
      ].join('\n');
      const text = `${head}\n${stringify(shown, { lineWidth: 0 })}`;
      if (opts.output) await writeFileAtomic(path.resolve(ctx.io.cwd, opts.output), text, { force: opts.force ?? false, inputs: [path.resolve(ctx.io.cwd, file)], what: 'case file' });
      else ctx.io.stdout(text);
      ctx.exit(0);
    });
  return cmd;
}
