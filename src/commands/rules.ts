import { Command } from 'commander';
import type { CommandContext } from './context.js';
import { InputError } from '../errors.js';
import { DERIVED_FACTS, FACT_CATALOGUE } from '../facts/facts.js';
import { defaultRulesDir, loadRules } from '../rules/load.js';
import { explainRule } from '../rules/explain.js';
import { lintRulesDir } from '../rules/lint.js';

export function rulesCommand(ctx: CommandContext): Command {
  const { io } = ctx;
  const cmd = new Command('rules').description('List, explain and lint the rules (the article\'s checklist as data).');
  cmd
    .command('list')
    .description('one line per rule: id, what it concludes, its source')
    .option('--rules <dir>', 'rules directory')
    .action(async (opts: { rules?: string }) => {
      const set = await loadRules(opts.rules);
      for (const r of set.rules) io.stdout(`${r.spec.id.padEnd(44)} ${r.spec.verdict.padEnd(21)} ${r.spec.source}\n`);
      for (const r of set.claims) io.stdout(`${r.spec.id.padEnd(44)} ${`claim ${r.spec.claim}`.padEnd(21)} ${r.spec.source}\n`);
    });
  cmd
    .command('explain')
    .description('what a rule checks, in words, with its source and the facts it reads')
    .argument('<id>', 'rule id, e.g. counters/nmissed-rose')
    .option('--rules <dir>', 'rules directory')
    .action(async (id: string, opts: { rules?: string }) => {
      const set = await loadRules(opts.rules);
      const rule = [...set.rules, ...set.claims].find((r) => r.spec.id === id);
      if (!rule) throw new InputError({}, `a rule id (see \`kretprobe-triage rules list\`)`, JSON.stringify(id));
      io.stdout(explainRule(rule));
    });
  cmd
    .command('facts')
    .description('every fact a rule may use: case fields and derived facts')
    .action(() => {
      for (const [name, e] of FACT_CATALOGUE) {
        const derived = DERIVED_FACTS.find((d) => d.name === name);
        io.stdout(`${name.padEnd(40)} ${e.type.padEnd(8)} ${e.description}${derived ? ` [derived; ${derived.basis}]` : ''}\n`);
      }
    });
  cmd
    .command('lint')
    .description('check rule files: schema errors with file:line:col, ids against paths, conditions that can never fire')
    .argument('[dir]', 'rules directory', defaultRulesDir())
    .action(async (dir: string) => {
      const { problems, files } = await lintRulesDir(dir);
      for (const p of problems) io.stderr(`${p.file}:${p.line}:${p.col}: ${p.message}\n`);
      io.stdout(`${files} rule file(s), ${problems.length} problem(s)\n`);
      ctx.exit(problems.length ? 2 : 0);
    });
  return cmd;
}
