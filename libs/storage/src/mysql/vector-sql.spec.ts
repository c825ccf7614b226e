import { describe, expect, it } from 'vitest';
import { MYSQL_MIGRATIONS } from './mysql-schema';
import { blobVectorSql, tidbVectorSql, vectorIndexName, vectorSqlFor, VECTOR_SUPPORT_PROBE } from './vector-sql';
import type { VectorCandidates } from './vector-sql';
import { blobToVector, textToVector, vectorToText } from './vector-codec';

// CI runs on MariaDB, which never executes the TiDB statements: these tests are their only check.
const candidates: VectorCandidates = {
  from: 'chunks c JOIN documents d ON d.id = c.document_id',
  where: 'c.tenant_id = ? AND c.kb_id = ?',
  params: ['t1', 'kb1'],
  idColumn: 'c.id',
  embeddingColumn: 'c.embedding',
};

describe('TiDB vector SQL', () => {
  it('detects TiDB by computing VEC_COSINE_DISTANCE of two literal vectors', () => {
    expect(VECTOR_SUPPORT_PROBE).toBe("SELECT VEC_COSINE_DISTANCE('[1,0]', '[0,1]') AS distance");
  });

  it('declares VECTOR columns without a dimension on every embedding table', () => {
    const ddl = MYSQL_MIGRATIONS[0]!.statements({ collation: 'utf8mb4_0900_bin', embeddingColumnType: tidbVectorSql.embeddingColumnType });
    const embeddingColumns = ddl.flatMap((statement) => statement.match(/embedding \S+ NULL/g) ?? []);
    expect(embeddingColumns).toEqual(['embedding VECTOR NULL', 'embedding VECTOR NULL', 'embedding VECTOR NULL']);
    for (const table of ['chunks', 'entities', 'relationships']) {
      expect(ddl.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table} (`))).toContain('embedding VECTOR NULL');
    }
    expect(ddl.every((s) => s.endsWith('COLLATE=utf8mb4_0900_bin'))).toBe(true);
  });

  it('ranks in the server with ORDER BY VEC_COSINE_DISTANCE ... LIMIT k, similarity = 1 - distance', () => {
    const query = Float32Array.from([0.5, -0.25, 1]);
    const statement = tidbVectorSql.rankStatement(candidates, query, 7);
    expect(statement.sql).toBe(
      'SELECT c.id AS id, 1 - VEC_COSINE_DISTANCE(c.embedding, ?) AS score FROM chunks c JOIN documents d ON d.id = c.document_id ' +
        'WHERE c.tenant_id = ? AND c.kb_id = ? AND c.embedding IS NOT NULL AND VEC_DIMS(c.embedding) = ? ' +
        'ORDER BY VEC_COSINE_DISTANCE(c.embedding, ?) LIMIT ?',
    );
    expect(statement.params).toEqual(['[0.5,-0.25,1]', 't1', 'kb1', 3, '[0.5,-0.25,1]', 7]);
    expect(tidbVectorSql.scoresInDatabase).toBe(true);
  });

  it('builds the HNSW index on the cosine distance of each embedding table', () => {
    expect(tidbVectorSql.vectorIndexDdl('chunks')).toBe(
      'ALTER TABLE chunks ADD VECTOR INDEX chunks_embedding_hnsw ((VEC_COSINE_DISTANCE(embedding))) USING HNSW',
    );
    expect(tidbVectorSql.vectorIndexDdl('relationships')).toBe(
      'ALTER TABLE relationships ADD VECTOR INDEX relationships_embedding_hnsw ((VEC_COSINE_DISTANCE(embedding))) USING HNSW',
    );
    expect(vectorIndexName('entities')).toBe('entities_embedding_hnsw');
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
  it('streams id and bytes for the service to score, and has no index', () => {
    const statement = blobVectorSql.rankStatement(candidates, Float32Array.from([1, 0]), 3);
    expect(statement.sql).toBe(
      'SELECT c.id AS id, c.embedding AS embedding FROM chunks c JOIN documents d ON d.id = c.document_id ' +
        'WHERE c.tenant_id = ? AND c.kb_id = ? AND c.embedding IS NOT NULL',
    );
    expect(statement.params).toEqual(['t1', 'kb1']);
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
