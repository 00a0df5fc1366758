import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, loadRules, parseCase, type Rules } from '../../src/index.js';
import { extractWriteup, loadLexicon, type Lexicon } from '../../src/writeup/index.js';

type Obj = Record<string, unknown>;
const at = (c: Obj, p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Obj)[k] : undefined), c);

let lex: Lexicon;
let rules: Rules;
beforeAll(async () => {
  lex = await loadLexicon();
  rules = await loadRules(path.resolve(import.meta.dirname, '../../rules'));
});
const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex).case as unknown as Obj;
const judge = (yaml: string) => evaluateCase(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml'), rules);

// The verbatim problem statement of bytedance/Elkeid#339 (cases/writeups/real/036): on a 2.6.32
// kernel an entry handler that returns nonzero leaks its instance (kernel-history.md §0), and the
// probe stays dead until the module is reloaded. Before concurrency.loss_until_reregistration
// every positive row failed: the schema refused the field and no reader wrote it.
const ELKEID_339 = [
  '## 问题简述',
  '',
  '在 CentOS6 的 2.6.32 内核下，driver 的 kretprobe entry_handler 函数若返回负值，则会导致 kretprobe_instance 无法释放，后续相应的探测功能将持续失效，只能重新加载 ko 文件。',
  '',
  '## 问题验证',
  '',
  '- 发行版：[CentOS 6.10](https://www.linuxvmimages.com/images/centos-6/)',
  '- 内核版本：[2.6.32-754.25.1.el6.x86_64](https://linuxsoft.cern.ch/cern/slc6X/x86_64/yum/updates/repoview/kernel-devel.html)',
  '- POC：在[官方 kretprobe 样例](https://github.com/spotify/linux/blob/master/samples/kprobes/kretprobe_example.c)基础上修改，相关文件可从 [POC.zip](https://github.com/bytedance/Elkeid/files/9893229/POC.zip) 下载。',
  '',
  '### kretprobe_example.c',
  '',
  '- 将 entry_handler 函数内容，修改为打印内核日志后返回负值，以标识完成一次 entry_handler 调用。',
  '- 将 my_kretprobe 结构体中的 maxactive 变量值，修改为 8，以便快速验证。',
  '',
].join('\n');

describe('a probe whose pool ran dry and stayed dry, read from a write-up (issue 21)', () => {
  it.each([
    {
      name: 'Elkeid#339: kretprobe_instance cannot be freed, the probing then stays broken until the ko is reloaded',
      url: 'https://github.com/bytedance/Elkeid/issues/339',
      text: ELKEID_339,
      facts: { 'concurrency.loss_until_reregistration': true, 'probe.registration.result': 'ok', 'probe.armed': true, 'probe.entry_handler.can_filter': true, 'probe.maxactive.requested': 8 },
    },
    {
      name: 'Elkeid#339, the maintainer\'s reply: the leak "eventually makes this kretprobe hook point fail"',
      url: 'https://github.com/bytedance/Elkeid/issues/339',
      text: 'hids模块本是通过返回-EINVAL以过省掉不必要的日志，但此举会导致kretprobe instance的泄漏并最终导致此kretprobe hook点失效。\n',
      facts: { 'concurrency.loss_until_reregistration': true },
    },
    {
      name: 'ours: leaked instances, then the probe stopped firing',
      url: 'our own example',
      text: 'Every rejected call leaked its kretprobe instance, and after a minute the probe stopped firing until we reloaded the module.\n',
      facts: { 'concurrency.loss_until_reregistration': true, 'probe.registration.result': 'ok' },
    },
    {
      name: '(guard) a probe that stopped working with no leak named: it may have been disarmed',
      url: 'our own example',
      text: 'After a minute the probe stopped firing until we reloaded the module.\n',
      facts: { 'concurrency.loss_until_reregistration': undefined, 'probe.registration.result': undefined },
    },
    {
      name: '(guard) a leak that left the probe working',
      url: 'our own example',
      text: 'Instances leaked on the old kernel, but the probe kept working for the whole test.\n',
      facts: { 'concurrency.loss_until_reregistration': undefined },
    },
    {
      name: '(guard) a leak only as a possibility',
      url: 'our own example',
      text: 'If instances leaked, the probe would have stopped working.\n',
      facts: { 'concurrency.loss_until_reregistration': undefined },
    },
    {
      name: '(guard) the instances were freed: no leak',
      url: 'our own example',
      text: 'kretprobe_instance 正常释放，探测功能没有失效。\n',
      facts: { 'concurrency.loss_until_reregistration': undefined },
    },
  ])('$name ($url)', ({ text, facts }) => {
    const c = read(text);
    for (const [p, v] of Object.entries(facts)) expect([p, at(c, p)]).toEqual([p, v]);
  });
});

describe('what a pool that ran dry for good decides', () => {
  // Elkeid#339 as a case: a module on 2.6.32 with a pool of 8 and an entry handler that rejects; no
  // counter read, no count of calls.
  const RUN = 'kernel: { release: 2.6.32-754.25.1.el6.x86_64 }\nprobe: { interface: module, target: f, maxactive: { requested: 8 }, entry_handler: { present: true, can_filter: true } }\n';

  it('Elkeid#339 read whole: capacity-missed, with no counter and no count of calls', async () => {
    const x = extractWriteup(`# excerpt\n\n${ELKEID_339}`, 'thread.md', lex);
    const v = await evaluateCase(x.case, rules);
    expect(v.verdict).toBe('capacity-missed');
    expect(v.possible).toEqual(['capacity-missed']);
    expect(v.findings.map((f) => f.rule)).toContain('counters/nmissed-rose');
  });

  it('without the silence the same evidence decides nothing', async () => {
    const v = await judge(RUN);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toContain('capacity-missed');
    expect(v.possible).toContain('filtered-by-design');
    expect(v.possible).toContain('setup-failure');
  });

  it('a probe said not to have gone silent establishes nothing either', async () => {
    const v = await judge(`${RUN}concurrency: { loss_until_reregistration: false }\n`);
    expect(v.verdict).toBe('insufficient-evidence');
  });

  it('the silence alone (registration unstated) leaves no setup failure: only a live probe goes silent that way', async () => {
    const v = await judge(`${RUN}concurrency: { loss_until_reregistration: true }\n`);
    expect(v.verdict).toBe('capacity-missed');
    expect(v.possible).not.toContain('setup-failure');
  });

  it.each([
    ['an entry probe (no pool)', 'probe: { kind: entry, target: f, registration: { result: ok }, armed: true }\nconcurrency: { loss_until_reregistration: true }\n', 'constraints/pool-drained-needs-pool'],
    ['the registration failed', 'probe: { target: f, registration: { result: EINVAL } }\nconcurrency: { loss_until_reregistration: true }\n', 'constraints/pool-drained-proves-registration'],
    ['the probe was not armed', 'probe: { target: f, registration: { result: ok }, armed: false }\nconcurrency: { loss_until_reregistration: true }\n', 'constraints/pool-drained-proves-registration'],
    ['the pool\'s own miss count stayed level', 'kernel: { release: 6.12.95+deb12-amd64, possible_cpus: 4 }\nprobe: { interface: module, target: f, registration: { result: ok, epoch: e }, armed: true, maxactive: { requested: 4, effective: 4 } }\nconcurrency: { loss_until_reregistration: true }\ncounters: { source: module-field, start: { epoch: e, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: e, nmissed: 0, kprobe_nmissed: 0 } }\n', 'constraints/pool-drained-lost-calls'],
    ['every eligible call has both records', 'probe: { interface: module, target: f, registration: { result: ok }, armed: true }\nconcurrency: { loss_until_reregistration: true, recursion_depth: 1 }\nledger: { eligible: 4, entries: 4, returns: 4, foreign_records: 0 }\n', 'constraints/pool-drained-lost-calls'],
  ])('contradicts %s: a finding, and no capacity verdict rests on it', async (_, yaml, rule) => {
    const v = await judge(yaml);
    expect(v.findings.map((f) => f.rule)).toContain(rule);
    expect(v.findings.map((f) => f.rule)).not.toContain('counters/nmissed-rose');
    expect(v.verdict).not.toBe('capacity-missed');
  });
});
