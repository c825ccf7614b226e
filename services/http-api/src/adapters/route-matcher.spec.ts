import { describe, expect, it } from 'vitest';
import { REST_ROUTES } from './rest-routes';
import { matchRoute } from './route-matcher';

const rpcOf = (method: string, path: string) => {
  const match = matchRoute(REST_ROUTES, method, path);
  return match && 'route' in match ? { rpc: match.route.rpc, params: match.params } : match;
};

describe('matchRoute', () => {
  it('finds the route and decodes its path parameters', () => {
    expect(rpcOf('GET', '/api/v1/knowledge-bases/my%20kb/documents/doc_1')).toEqual({ rpc: 'GetDocument', params: { knowledgeBase: 'my kb', documentId: 'doc_1' } });
    expect(rpcOf('POST', '/api/v1/knowledge-bases/kb/graph/edits/e1/undo')).toEqual({ rpc: 'UndoGraphEdit', params: { knowledgeBase: 'kb', editId: 'e1' } });
  });

  it('prefers literal segments for the same method, and falls back to a parameter for another', () => {
    expect(rpcOf('POST', '/api/v1/knowledge-bases/kb/entities/merge')).toMatchObject({ rpc: 'MergeEntities' });
    expect(rpcOf('GET', '/api/v1/knowledge-bases/kb/entities/merge')).toMatchObject({ rpc: 'GetEntity', params: { entityId: 'merge' } });
    expect(rpcOf('POST', '/api/v1/knowledge-bases/kb/documents/from-url')).toMatchObject({ rpc: 'AddDocumentFromUrl' });
  });

  it('answers the allowed methods of a known path, and nothing for an unknown one', () => {
    expect(matchRoute(REST_ROUTES, 'PUT', '/api/v1/knowledge-bases/kb')).toEqual({ allowed: ['GET', 'PATCH', 'DELETE'] });
    expect(matchRoute(REST_ROUTES, 'GET', '/api/v1/knowledge-bases/kb/nothing')).toBeUndefined();
    expect(matchRoute(REST_ROUTES, 'GET', '/api/v1/knowledge-bases/')).toBeUndefined();
    expect(matchRoute(REST_ROUTES, 'GET', '/api/v1/knowledge-bases/%E0%A4%A')).toBeUndefined();
  });
});
