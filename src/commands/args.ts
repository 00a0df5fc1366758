import { InputError } from '../errors.js';

/** A commander argument parser for whole numbers ≥ min; anything else is a usage error (exit 2). */
export function intArg(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^-?\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < min) throw new InputError({}, `${name}: an integer ≥ ${min}`, JSON.stringify(v));
    return n;
  };
}
