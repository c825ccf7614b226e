/**
 * Retrieval-quality evaluation over a gold set (the format of `../shared/datasets`): parsing
 * of the corpus and question files, and the metrics (Recall@k, MRR, latency percentiles).
 * Pure functions, so `trellis eval` and the tests share one definition of every number.
 */

export interface EvalPassage {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

export interface EvalQuestion {
  readonly id: string;
  readonly question: string;
  /** Ids of the passages that support the answer. */
  readonly gold: readonly string[];
}

/** A malformed eval file: says which file and line, and what to fix. */
export class EvalFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${file}:${line}: ${detail}`);
    this.name = 'EvalFileError';
  }
}

/** `{"id", "title", "text"}` per line; blank lines are skipped; ids must be unique. */
export function parseCorpus(file: string, content: string): EvalPassage[] {
  const seen = new Set<string>();
  return jsonLines(file, content, (record, line) => {
    const id = requireString(file, line, record, 'id');
    const text = requireString(file, line, record, 'text');
    const title = record.title === undefined ? '' : requireString(file, line, record, 'title', true);
    if (seen.has(id)) throw new EvalFileError(file, line, `duplicate passage id "${id}"`);
    seen.add(id);
    return { id, title, text };
  });
}

/**
 * `{"id", "question", "gold": [passage ids]}` per line. When `passageIds` is given, every gold
 * id must name a passage of the corpus.
 */
export function parseQuestions(file: string, content: string, passageIds?: ReadonlySet<string>): EvalQuestion[] {
  return jsonLines(file, content, (record, line) => {
    const id = record.id === undefined ? `line ${line}` : typeof record.id === 'number' ? String(record.id) : requireString(file, line, record, 'id');
    const question = requireString(file, line, record, 'question');
    const gold = record.gold;
    if (!Array.isArray(gold) || gold.length === 0 || !gold.every((g): g is string => typeof g === 'string' && g !== '')) {
      throw new EvalFileError(file, line, '"gold" must be a non-empty array of passage ids');
    }
    const unknown = passageIds ? gold.find((g) => !passageIds.has(g)) : undefined;
    if (unknown !== undefined) throw new EvalFileError(file, line, `gold passage "${unknown}" is not in the corpus`);
    return { id, question, gold: [...new Set(gold)] };
  });
}

function jsonLines<T>(file: string, content: string, parse: (record: Record<string, unknown>, line: number) => T): T[] {
  const out: T[] = [];
  content.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    let record: unknown;
    try {
      record = JSON.parse(raw);
    } catch (error) {
      throw new EvalFileError(file, line, `not valid JSON (${(error as Error).message})`);
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record)) throw new EvalFileError(file, line, 'expected a JSON object');
    out.push(parse(record as Record<string, unknown>, line));
  });
  if (out.length === 0) throw new EvalFileError(file, 1, 'the file has no records');
  return out;
}

function requireString(file: string, line: number, record: Record<string, unknown>, field: string, allowEmpty = false): string {
  const value = record[field];
  if (typeof value !== 'string' || (!allowEmpty && value.trim() === '')) throw new EvalFileError(file, line, `"${field}" must be a non-empty string`);
  return value;
}

/** Ids in first-seen order: several chunks of one passage count once. */
export function dedupeRanking(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/** Share of the gold passages among the first k retrieved. */
export function recallAt(retrieved: readonly string[], gold: readonly string[], k: number): number {
  if (gold.length === 0) return 0;
  const top = new Set(retrieved.slice(0, k));
  return gold.filter((g) => top.has(g)).length / gold.length;
}

/** 1 / rank of the first gold passage; 0 when none was retrieved. */
export function reciprocalRank(retrieved: readonly string[], gold: readonly string[]): number {
  const goldSet = new Set(gold);
  const index = retrieved.findIndex((id) => goldSet.has(id));
  return index < 0 ? 0 : 1 / (index + 1);
}

/** Nearest-rank percentile (p in 0..100) of the values; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface QuestionResult {
  readonly retrieved: readonly string[];
  readonly gold: readonly string[];
  readonly latencyMs: number;
}

export interface EvalSummary {
  /** k → mean Recall@k over the questions. */
  readonly recall: Record<number, number>;
  readonly mrr: number;
  readonly latencyP50Ms: number;
  readonly latencyP95Ms: number;
  readonly questions: number;
}

export function summarize(results: readonly QuestionResult[], ks: readonly number[]): EvalSummary {
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);
  const recall: Record<number, number> = {};
  for (const k of ks) recall[k] = mean(results.map((r) => recallAt(r.retrieved, r.gold, k)));
  const latencies = results.map((r) => r.latencyMs);
  return {
    recall,
    mrr: mean(results.map((r) => reciprocalRank(r.retrieved, r.gold))),
    latencyP50Ms: percentile(latencies, 50),
    latencyP95Ms: percentile(latencies, 95),
    questions: results.length,
  };
}
