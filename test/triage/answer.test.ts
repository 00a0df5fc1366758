import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { checkValue, parseTyped } from '../../src/triage/answer.js';
import { parseAnswersFile } from '../../src/triage/answers-file.js';
import { loadQuestions, type QuestionSet } from '../../src/triage/questions.js';
import { root } from './helpers.js';

let questions: QuestionSet;
beforeAll(async () => {
  questions = await loadQuestions(path.join(root, 'rules', 'questions'));
});
const q = (id: string) => questions.byId.get(id)!;

describe('typed answers', () => {
  it.each([
    ['count', 'end-nmissed', '3', 3],
    ['count, unknown', 'end-nmissed', 'unknown', 'unknown'],
    ['count, ? for unknown', 'end-nmissed', '?', 'unknown'],
    ['integer may be negative (C API default)', 'maxactive-requested', '-1', -1],
    ['cpulist as a count', 'possible-cpus', '8', 8],
    ['cpulist as a list', 'possible-cpus', '0-3,8-11', '0-3,8-11'],
    ['list of clones', 'clones', 'pipe_read.isra.0, pipe_read.cold', ['pipe_read.isra.0', 'pipe_read.cold']],
    ['no clones', 'clones', 'none', []],
    ['an errno outside the list (other)', 'registration-result', 'EPERM', 'EPERM'],
    ['text', 'start-epoch', 'reg-1', 'reg-1'],
  ])('%s', (_name, id, text, value) => {
    expect(parseTyped(q(id), text)).toEqual({ ok: true, value });
  });

  it.each([
    ['a negative count', 'end-nmissed', '-1'],
    ['words for a count', 'end-nmissed', 'three'],
    ['zero CPUs', 'possible-cpus', '0'],
    ['a broken cpulist', 'possible-cpus', '3-1'],
    ['an empty text', 'start-epoch', '  '],
    ['a value outside a closed choice', 'identity', 'pid'],
  ])('refuses %s', (_name, id, text) => {
    expect(parseTyped(q(id), text).ok).toBe(false);
  });

  it('takes YAML-typed values from an answers file', () => {
    expect(checkValue(q('armed'), true)).toEqual({ ok: true, value: true });
    expect(checkValue(q('armed'), 'yes').ok).toBe(false);
    expect(checkValue(q('end-nmissed'), 2)).toEqual({ ok: true, value: 2 });
    expect(checkValue(q('clones'), ['a.isra.0'])).toEqual({ ok: true, value: ['a.isra.0'] });
    expect(checkValue(q('start-epoch'), 7)).toEqual({ ok: true, value: '7' });
  });
});

describe('parseAnswersFile', () => {
  it('reads fact paths and values in file order', () => {
    const got = parseAnswersFile('probe.target: pipe_read\nprobe.armed: true\ncounters.end.nmissed: 1\nledger.workload_quiesced: unknown\n', 'a.yaml', questions);
    expect(got.map((g) => [g.question.id, g.value])).toEqual([['target', 'pipe_read'], ['armed', true], ['end-nmissed', 1], ['workload-quiesced', 'unknown']]);
  });

  it.each([
    ['a fact no question sets', 'probe.target: x\nprobe.was_armed: true\n', 2, 1, 'probe.was_armed'],
    ['a value of the wrong type', 'probe.target: x\ncounters.end.nmissed: lots\n', 2, 23, 'lots'],
    ['a value outside the choices', 'ledger.identity: pid\n', 1, 18, 'pid'],
    ['a list instead of a map', '- probe.target\n', 1, 1, 'something else'],
    ['a duplicate key', 'probe.armed: true\nprobe.armed: false\n', 2, 1, ''],
  ])('refuses %s at its position', (_name, text, line, col, got) => {
    let err: unknown;
    try {
      parseAnswersFile(text, 'answers.yaml', questions);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    const e = err as InputError;
    expect([e.file, e.line, e.col]).toEqual(['answers.yaml', line, col]);
    expect(e.message).toMatch(/^answers\.yaml:\d+:\d+: expected /);
    expect(e.message).toContain(got);
  });
});
