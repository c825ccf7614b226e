import { TrellisError } from '@trellis/contracts';

/** Where and as whom to connect, read from a `mysql://user:pass@host:port/db` URL. */
export interface MysqlConnectionSettings {
  host: string;
  port: number;
  username: string;
  password: string;
  database: string;
  /** `?ssl=true`: TLS with certificate checks, which TiDB Cloud requires. */
  ssl: boolean;
}

const DATABASE_NAME = /^[A-Za-z0-9_$-]{1,64}$/;

export function parseMysqlUrl(url: string): MysqlConnectionSettings {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The URL may carry a password: never echo it.
    throw TrellisError.invalid('database URL is not a valid URL');
  }
  if (parsed.protocol !== 'mysql:') throw TrellisError.invalid('database URL must start with mysql://');
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!DATABASE_NAME.test(database)) {
    throw TrellisError.invalid('database URL must name a database of letters, digits, _, $ or - (mysql://user:pass@host:port/db)');
  }
  const ssl = parsed.searchParams.get('ssl');
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    username: decodeURIComponent(parsed.username) || 'root',
    password: decodeURIComponent(parsed.password),
    database,
    ssl: ssl === 'true' || ssl === '1',
  };
}

/** Back-quoted identifier; names are validated first, so this only guards against typos. */
export function quoteIdentifier(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``;
}
