import type { Command } from 'commander';
import type { CommandContext } from '../cli.js';
import { auditCommand } from './audit.js';
import { rulesCommand } from './rules.js';
import { collectCommand } from './collect.js';
import { labCommand } from './lab.js';
import { caseCommand } from './case.js';
import { ledgerCommand } from './ledger.js';
import { capacityCommand } from './capacity.js';
import { triageCommand } from './triage.js';
import { reportCommand } from './report.js';

/** Every subcommand, in the order `--help` lists them. One line each; each module owns its command. */
export const commands: Array<(ctx: CommandContext) => Command> = [
  auditCommand,
  rulesCommand,
  collectCommand,
  labCommand,
  caseCommand,
  ledgerCommand,
  capacityCommand,
  triageCommand,
  reportCommand,
];
