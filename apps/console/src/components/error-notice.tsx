import { ApiError } from '../api/http';

/** A failed call as the user reads it: status, title and the server's own message. */
export function ErrorNotice({ error, context }: { error: unknown; context?: string }) {
  if (error === undefined || error === null) return null;
  const api = error instanceof ApiError ? error : undefined;
  const message = api ? api.detail : error instanceof Error ? error.message : String(error);
  return (
    <div className="error" role="alert">
      <strong>
        {context ? `${context}: ` : ''}
        {api && api.status > 0 ? `${api.status} ${api.title}` : (api?.title ?? 'Error')}
      </strong>
      <span className="error-detail">{message}</span>
      {api?.status === 401 ? <span className="error-hint">Set a valid API key in the header above.</span> : null}
      {api?.field ? <span className="error-hint">Field: {api.field}</span> : null}
    </div>
  );
}

/** A load in progress, said in words (screen readers) as well as shown. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}
