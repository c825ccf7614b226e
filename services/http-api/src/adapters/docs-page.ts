import type { OpenApiDocument } from './openapi-document';

type Operation = { summary?: string; 'x-grpc-method'?: string; parameters?: Array<{ name: string; in: string }> };

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `/api/docs`: one self-contained HTML page (no script, no CDN) listing the operations of the
 * OpenAPI document it is given, with the gRPC method behind each.
 */
export function docsPage(document: OpenApiDocument): string {
  const rows = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, Operation>).map(([method, op]) => {
      const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      return `<tr><td class="m ${method}">${method.toUpperCase()}</td><td><code>${escape(path)}</code>${query.length > 0 ? `<div class="q">?${escape(query.join(', '))}</div>` : ''}</td><td>${escape(op.summary ?? '')}</td><td><code>${escape(op['x-grpc-method'] ?? '')}</code></td></tr>`;
    }),
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(document.info.title)}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:80rem;padding:0 1rem;color:#1d2330}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #dde;padding:.4rem .5rem;text-align:left;vertical-align:top}
code{font:13px ui-monospace,monospace}.m{font-weight:700;width:4.5rem}.get{color:#1769aa}.post{color:#2e7d32}.patch{color:#a15c00}.delete{color:#b3261e}.q{color:#667;font-size:13px}
</style></head><body>
<h1>${escape(document.info.title)} <small>${escape(document.info.version)}</small></h1>
<p>${rows.length} operations. JSON bodies use the proto3 JSON mapping; errors are <code>application/problem+json</code>.
The machine-readable document is <a href="/api/openapi.json">/api/openapi.json</a>. An OpenAI-compatible endpoint is served at
<code>/v1/models</code> and <code>/v1/chat/completions</code> (the model is a knowledge base's name).</p>
<table><thead><tr><th>Method</th><th>Path</th><th>What it does</th><th>gRPC method</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></body></html>
`;
}
