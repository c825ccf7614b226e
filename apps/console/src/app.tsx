import { Suspense, lazy, useState } from 'react';
import { ApiKeyForm } from './components/api-key-form';
import { KnowledgeBaseProvider } from './components/knowledge-bases';
import { ChatPage } from './pages/chat/chat-page';
import { EvaluationsPage } from './pages/evaluations/evaluations-page';
import { KnowledgeBasesPage } from './pages/knowledge-bases/knowledge-bases-page';
import { PlaygroundPage } from './pages/playground/playground-page';
import { Link, useLocation } from './router';

// The graph explorer carries cytoscape.js, most of the bundle: loaded when first opened.
const GraphPage = lazy(async () => ({ default: (await import('./pages/graph/graph-page')).GraphPage }));

const PAGES = [
  { path: '/chat', title: 'Chat', Page: ChatPage },
  { path: '/knowledge-bases', title: 'Knowledge bases', Page: KnowledgeBasesPage },
  { path: '/graph', title: 'Graph explorer', Page: GraphPage },
  { path: '/playground', title: 'Retrieval playground', Page: PlaygroundPage },
  { path: '/evaluations', title: 'Evaluations', Page: EvaluationsPage },
] as const;

export function App() {
  const { path } = useLocation();
  const [keyVersion, setKeyVersion] = useState(0);
  const page = PAGES.find((p) => path === p.path || path.startsWith(`${p.path}/`)) ?? (path === '/' ? PAGES[0] : undefined);
  return (
    <KnowledgeBaseProvider apiKeyVersion={keyVersion}>
      <header className="top">
        <span className="brand">Trellis</span>
        <nav aria-label="Pages">
          {PAGES.map((p) => (
            <Link key={p.path} to={p.path} aria-current={p === page ? 'page' : undefined}>
              {p.title}
            </Link>
          ))}
        </nav>
        <ApiKeyForm onChange={() => setKeyVersion((v) => v + 1)} />
      </header>
      <main key={keyVersion}>
        {page ? (
          <Suspense fallback={<p className="muted" role="status">Loading the page…</p>}>
            <page.Page />
          </Suspense>
        ) : (
          <section>
            <h1>Not found</h1>
            <p>
              There is no page at {path}. <Link to="/chat">Go to the chat</Link>.
            </p>
          </section>
        )}
      </main>
    </KnowledgeBaseProvider>
  );
}
