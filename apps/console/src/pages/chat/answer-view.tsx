import { ErrorNotice } from '../../components/error-notice';
import type { Citation } from '../../api/types';
import { graphContextOf } from './chat-stream';
import { GraphContext } from './graph-context';
import type { StreamedAnswer } from './chat-stream';

const STAGE_TITLES: Record<string, string> = {
  graph_retrieval: 'graph',
  refinement: 'refine',
  chunk_retrieval: 'chunks',
  generation: 'answer',
  routing: 'routing',
  community_retrieval: 'communities',
};

/** One knowledge base's answer: stages as they arrive, the text, its citations and the graph context it used. */
export function AnswerView({ question, answer, onOpenCitation }: { question: string; answer: StreamedAnswer; onOpenCitation: (citation: Citation) => void }) {
  const graph = graphContextOf(answer);
  const running = answer.done === undefined && answer.error === undefined;
  return (
    <article className="card" aria-busy={running} data-testid={`answer-${answer.knowledgeBase}`}>
      <h3 style={{ marginTop: 0 }}>{answer.knowledgeBase}</h3>
      <ol className="stages" aria-label="Stages">
        {answer.stages.map((s, i) => (
          <li key={`${s.name}-${i}`} title={s.detail}>
            {STAGE_TITLES[s.name] ?? s.name}
          </li>
        ))}
        {running ? <li className="muted">working…</li> : null}
      </ol>
      <div className="answer" aria-live="polite">
        {answer.text || (running ? '' : <span className="muted">No answer text.</span>)}
      </div>
      <ErrorNotice error={answer.error} context="Answer" />
      {answer.done?.condensedQuestion ? <p className="muted">Read with the conversation as: {answer.done.condensedQuestion}</p> : null}
      {answer.done?.refinedQuestion ? <p className="muted">Refined question: {answer.done.refinedQuestion}</p> : null}
      {answer.citations.length > 0 ? (
        <>
          <h4>Citations</h4>
          <ol className="citations">
            {answer.citations.map((c) => (
              <li key={`${c.index}-${c.chunkId}`} value={c.index}>
                <button type="button" className="link" onClick={() => onOpenCitation(c)}>
                  {c.sourceUri || c.documentId}
                </button>{' '}
                <span className="muted">{c.snippet.slice(0, 160)}</span>
              </li>
            ))}
          </ol>
        </>
      ) : null}
      {answer.done !== undefined ? <GraphContext knowledgeBase={answer.knowledgeBase} question={question} summary={graph} /> : null}
    </article>
  );
}
