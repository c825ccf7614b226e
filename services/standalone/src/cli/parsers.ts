import { InvalidArgumentError } from 'commander';

/** Option parser for a whole number in [min, max]; commander reports the message on a bad value. */
export function integer(min: number, max: number): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}
