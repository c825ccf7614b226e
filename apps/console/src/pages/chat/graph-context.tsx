import { useState } from 'react';
import { retrieveGraph } from '../../api/trellis';
import { ErrorNotice, Loading } from '../../components/error-notice';
import { useAsync } from '../../components/use-async';

/**
 * The graph context of an answer. The chat stream reports only how many relationships its graph
 * stage found; the relationships themselves come from the same graph retrieval (RetrieveGraph,
 * server defaults, the question as asked), read when the reader opens this section.
 */
export function GraphContext({ knowledgeBase, question, summary }: { knowledgeBase: string; question: string; summary: string | undefined }) {
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Graph context used{summary ? ` (${summary})` : ''}</summary>
      {open ? <Relationships knowledgeBase={knowledgeBase} question={question} /> : null}
    </details>
  );
}

function Relationships({ knowledgeBase, question }: { knowledgeBase: string; question: string }) {
  const graph = useAsync(() => retrieveGraph(knowledgeBase, question), [knowledgeBase, question]);
  if (graph.error !== undefined) return <ErrorNotice error={graph.error} context="Graph context" />;
  if (graph.data === undefined) return <Loading what="the graph context" />;
  if (graph.data.relationships.length === 0) return <p className="muted">The graph had nothing for this question.</p>;
  return (
    <table data-testid="graph-context">
      <thead>
        <tr>
          <th>Relationship</th>
          <th className="num">Hop</th>
          <th className="num">Score</th>
        </tr>
      </thead>
      <tbody>
        {graph.data.relationships.map(({ relationship: r, hop, score }) => (
          <tr key={r.id}>
            <td>
              {r.sourceName} <strong>{r.label}</strong> {r.targetName}
            </td>
            <td className="num">{hop}</td>
            <td className="num">{score.toFixed(3)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
