import { describe, expect, it } from 'vitest';
import { parseMysqlUrl } from './mysql-url';

describe('database URL', () => {
  it('reads host, port, credentials, database and TLS', () => {
    expect(parseMysqlUrl('mysql://app:p%40ss@db.example:4000/trellis?ssl=true')).toEqual({
      host: 'db.example', port: 4000, username: 'app', password: 'p@ss', database: 'trellis', ssl: true,
    });
    expect(parseMysqlUrl('mysql://root@127.0.0.1/kb')).toMatchObject({ port: 3306, password: '', ssl: false });
  });

  it('rejects URLs without a usable database name, without echoing them', () => {
    expect(() => parseMysqlUrl('mysql://u:secret@h:1/')).toThrow(/must name a database/);
    expect(() => parseMysqlUrl('mysql://u:secret@h:1/a;drop')).toThrow(/must name a database/);
    expect(() => parseMysqlUrl('postgres://u:secret@h/db')).toThrow(/mysql:\/\//);
    expect(() => parseMysqlUrl('not a url secret')).not.toThrow(/secret/);
  });
});
