import { describe, expect, it } from 'vitest';
import { MYSQL_MIGRATIONS } from './mysql-schema';
import { EMBEDDING_TABLES, blobVectorSql, tidbVectorSql, vectorIndexName, vectorSqlFor } from './vector-sql';
import type { VectorCandidates } from './vector-sql';
import { blobToVector, textToVector, vectorToText } from './vector-codec';

// Whether TiDB accepts these statements is for TiDB's own parser to say: test/tidb-sql.spec.ts
// runs the store on its TiDB path and parses everything it sends. These tests hold what the
// statements must do for the code that runs them.
const candidates: VectorCandidates = {
  from: 'chunks c JOIN documents d ON d.id = c.document_id',
  where: 'c.tenant_id = ? AND c.kb_id = ?',
  params: ['t1', 'kb1'],
  idColumn: 'c.id',
  embeddingColumn: 'c.embedding',
};

const placeholders = (sql: string) => sql.split('?').length - 1;

describe('TiDB vector SQL', () => {
  it('declares VECTOR columns without a dimension on every embedding table, so embedding models can differ per knowledge base', () => {
    const ddl = MYSQL_MIGRATIONS[0]!.statements({ collation: 'utf8mb4_0900_bin', embeddingColumnType: tidbVectorSql.embeddingColumnType });
    for (const table of EMBEDDING_TABLES) {
      expect(ddl.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table} (`))).toContain('embedding VECTOR NULL');
    }
  });

  it('ranks in the server, binding the query, the candidates, the dimension and k, one value per placeholder', () => {
    const query = Float32Array.from([0.5, -0.25, 1]);
    const statement = tidbVectorSql.rankStatement(candidates, query, 7);
    expect(statement.params).toEqual(['[0.5,-0.25,1]', 't1', 'kb1', 3, '[0.5,-0.25,1]', 7]);
    expect(placeholders(statement.sql)).toBe(statement.params.length);
    expect(tidbVectorSql.scoresInDatabase).toBe(true);
  });

  it('names each HNSW index as the missing-index check looks it up', () => {
    for (const table of EMBEDDING_TABLES) {
      expect(tidbVectorSql.vectorIndexDdl(table)).toContain(` ${vectorIndexName(table)} `);
      expect(tidbVectorSql.vectorIndexDdl(table)).toMatch(new RegExp(`^ALTER TABLE ${table} `));
    }
    expect(new Set(EMBEDDING_TABLES.map(vectorIndexName)).size).toBe(EMBEDDING_TABLES.length);
  });

  it('writes embeddings in the VECTOR text form, and an empty one as NULL', () => {
    const vector = Float32Array.from([0.1, -3, 1e-7]);
    const text = tidbVectorSql.embeddingValue(vector);
    expect(typeof text).toBe('string');
    expect(textToVector(String(text))).toEqual(vector);
    expect(tidbVectorSql.embeddingValue(new Float32Array(0))).toBeNull();
    expect(() => vectorToText(Float32Array.from([Number.NaN]))).toThrow(RangeError);
  });
});

describe('blob vector SQL', () => {
  it('streams id and bytes for the service to score, binding only the candidates, and has no index', () => {
    const statement = blobVectorSql.rankStatement(candidates, Float32Array.from([1, 0]), 3);
    expect(statement.params).toEqual(['t1', 'kb1']);
    expect(placeholders(statement.sql)).toBe(statement.params.length);
    expect(blobVectorSql.scoresInDatabase).toBe(false);
    expect(blobVectorSql.vectorIndexDdl('chunks')).toBeNull();
    expect(blobVectorSql.embeddingColumnType).toBe('MEDIUMBLOB');
  });

  it('stores float32 little-endian bytes, as the SQLite adapter does', () => {
    const vector = Float32Array.from([1.5, -2]);
    const bytes = blobVectorSql.embeddingValue(vector);
    expect(Buffer.isBuffer(bytes) && bytes.readFloatLE(4)).toBe(-2);
    expect(blobToVector(bytes)).toEqual(vector);
  });

  it('is chosen by storage name', () => {
    expect(vectorSqlFor('blob')).toBe(blobVectorSql);
    expect(vectorSqlFor('tidb-vector')).toBe(tidbVectorSql);
  });
});
