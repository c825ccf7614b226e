type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads typed settings from environment variables and collects every problem instead of
 * throwing at the first, so a bad deployment fails listing all of them.
 */
export class EnvReader {
  readonly problems: string[] = [];

  constructor(readonly env: Env) {}

  /** The trimmed value, or undefined when unset or blank. */
  text(name: string): string | undefined {
    const raw = this.env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  /** A number in (0, 1]. */
  fraction(name: string, fallback: number): number {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0 || value > 1) {
      this.problems.push(`${name} must be a number in (0, 1] (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  /** `true` or `false`. */
  flag(name: string, fallback: boolean): boolean {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    if (raw !== 'true' && raw !== 'false') {
      this.problems.push(`${name} must be true or false`);
      return fallback;
    }
    return raw === 'true';
  }

  /** One of `choices`; the message names them all. */
  choice<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    if (!(choices as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be ${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]}`);
      return fallback;
    }
    return raw as T;
  }

  /** An http(s) URL, or undefined when unset. */
  httpUrl(name: string, fallback?: string): string | undefined {
    const raw = this.text(name) ?? fallback;
    if (raw !== undefined && !/^https?:\/\//.test(raw)) this.problems.push(`${name} must be an http(s) URL`);
    return raw;
  }
}
