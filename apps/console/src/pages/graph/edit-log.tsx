import { listGraphEdits, undoGraphEdit } from '../../api/trellis';
import { ErrorNotice, Loading } from '../../components/error-notice';
import { useAction, useAsync } from '../../components/use-async';

/** The graph edit log, newest first, each edit undoable while it holds. */
export function EditLog({ knowledgeBase, version, onUndone }: { knowledgeBase: string; version: number; onUndone: () => void }) {
  const edits = useAsync(() => listGraphEdits(knowledgeBase), [knowledgeBase, version]);
  const action = useAction();
  return (
    <section className="card" aria-labelledby="edit-log-title">
      <h2 id="edit-log-title" style={{ marginTop: 0 }}>
        Edit log
      </h2>
      <ErrorNotice error={edits.error} context="Edit log" />
      <ErrorNotice error={action.error} context="Undo" />
      {edits.loading && edits.data === undefined ? <Loading what="the edit log" /> : null}
      {edits.data?.length === 0 ? <p className="muted">No manual edits yet.</p> : null}
      {edits.data && edits.data.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Action</th>
              <th>Who</th>
              <th>Change</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {edits.data.map((e) => (
              <tr key={e.id} data-testid="edit-row" data-action={e.action} data-undone={e.undoneAt ? 'true' : 'false'}>
                <td>{new Date(e.createdAt).toLocaleTimeString()}</td>
                <td>{e.action}</td>
                <td>{e.actor}</td>
                <td>
                  <details>
                    <summary>{e.targetIds.length} target(s)</summary>
                    <pre className="json">before: {e.before}</pre>
                    <pre className="json">after: {e.after}</pre>
                  </details>
                </td>
                <td>
                  {e.undoneAt ? (
                    <span className="muted">undone {new Date(e.undoneAt).toLocaleTimeString()}</span>
                  ) : (
                    <button type="button" className="secondary" disabled={action.busy} onClick={() => void action.run(() => undoGraphEdit(knowledgeBase, e.id)).then((ok) => ok && onUndone())}>
                      Undo
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
