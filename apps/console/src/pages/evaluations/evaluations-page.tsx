import { useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { ErrorNotice } from '../../components/error-notice';
import { KnowledgeBaseSelect, useKnowledgeBases } from '../../components/knowledge-bases';
import { DEFAULT_MODE, runEvaluation } from './run-evaluation';
import type { EvaluationRun } from './run-evaluation';
import { ModeCheckboxes } from '../../components/mode-checkboxes';

const MODES = [DEFAULT_MODE, 'vector', 'fulltext', 'graph', 'hybrid'];

async function readFile(input: HTMLInputElement | null): Promise<{ name: string; text: string } | undefined> {
  const file = input?.files?.[0];
  return file ? { name: file.name, text: await file.text() } : undefined;
}

/** Evaluations: a gold set in `trellis eval`'s format (questions.jsonl, optionally corpus.jsonl) → Recall@k, MRR and latency per mode. */
export function EvaluationsPage() {
  const { selected, list } = useKnowledgeBases();
  const questionsInput = useRef<HTMLInputElement>(null);
  const corpusInput = useRef<HTMLInputElement>(null);
  const [modes, setModes] = useState<string[]>([DEFAULT_MODE, 'vector', 'hybrid']);
  const [ks, setKs] = useState('2,5');
  const [progress, setProgress] = useState('');
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<{ knowledgeBase: string; questions: number; runs: EvaluationRun[]; ks: number[] }>();
  const abort = useRef<AbortController>(undefined);

  const start = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setResult(undefined);
    const parsedKs = [...new Set(ks.split(',').map((k) => Number(k.trim())))].filter((k) => Number.isInteger(k) && k > 0 && k <= 100).sort((a, b) => a - b);
    try {
      const questions = await readFile(questionsInput.current);
      const corpus = await readFile(corpusInput.current);
      if (questions === undefined) throw new Error('choose a questions file (questions.jsonl)');
      if (parsedKs.length === 0) throw new Error('k must be a comma-separated list of integers from 1 to 100');
      if (corpus === undefined && !selected) throw new Error('choose a corpus file, or a knowledge base that holds the corpus');
      abort.current = new AbortController();
      const run = await runEvaluation({ questions, ...(corpus ? { corpus } : {}), knowledgeBase: selected, modes, ks: parsedKs }, setProgress, abort.current.signal);
      setResult({ ...run, ks: parsedKs });
      if (corpus) list.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setProgress('');
      abort.current = undefined;
    }
  };

  const pct = (n: number | undefined) => (100 * (n ?? 0)).toFixed(1);
  return (
    <section>
      <h1>Evaluations</h1>
      <form className="card" onSubmit={start}>
        <p className="muted" style={{ marginTop: 0 }}>
          The gold-set format of <code>trellis eval</code>: <code>questions.jsonl</code> lines <code>{'{"id", "question", "gold": [passage ids]}'}</code>, and optionally <code>corpus.jsonl</code>{' '}
          lines <code>{'{"id", "title", "text"}'}</code> to ingest into a new knowledge base (source URI = passage id). Without a corpus, the selected knowledge base is evaluated as it is.
        </p>
        <div className="form-grid">
          <label>
            Questions (jsonl)
            <input ref={questionsInput} type="file" accept=".jsonl,.json,.txt" required />
          </label>
          <label>
            Corpus (jsonl, optional)
            <input ref={corpusInput} type="file" accept=".jsonl,.json,.txt" />
          </label>
          <label>
            k (comma-separated)
            <input value={ks} onChange={(e) => setKs(e.target.value)} />
          </label>
        </div>
        <div className="actions">
          <KnowledgeBaseSelect id="eval-kb" />
          <ModeCheckboxes options={MODES} chosen={modes} onChange={setModes} />
        </div>
        <div className="actions">
          <button type="submit" disabled={progress !== '' || modes.length === 0}>
            Run evaluation
          </button>
          {progress ? (
            <>
              <span role="status">{progress}</span>
              <button type="button" className="secondary" onClick={() => abort.current?.abort()}>
                Cancel
              </button>
            </>
          ) : null}
        </div>
        <ErrorNotice error={error} context="Evaluation" />
      </form>
      {result ? (
        <section className="card" aria-labelledby="eval-results">
          <h2 id="eval-results" style={{ marginTop: 0 }}>
            {result.questions} questions on {result.knowledgeBase}
          </h2>
          <table data-testid="eval-table">
            <thead>
              <tr>
                <th>Mode</th>
                {result.ks.map((k) => (
                  <th key={k} className="num">
                    R@{k}
                  </th>
                ))}
                <th className="num">MRR</th>
                <th className="num">p50 ms</th>
                <th className="num">p95 ms</th>
              </tr>
            </thead>
            <tbody>
              {result.runs.map((r) => (
                <tr key={r.mode}>
                  <td>{r.mode}</td>
                  {result.ks.map((k) => (
                    <td key={k} className="num">
                      {pct(r.summary.recall[k])}
                    </td>
                  ))}
                  <td className="num">{r.summary.mrr.toFixed(3)}</td>
                  <td className="num">{r.summary.latencyP50Ms.toFixed(1)}</td>
                  <td className="num">{r.summary.latencyP95Ms.toFixed(1)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
    </section>
  );
}
