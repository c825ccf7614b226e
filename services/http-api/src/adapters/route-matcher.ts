import type { RestRoute } from './rest-routes';

export type RouteMatch = { route: RestRoute; params: Record<string, string> } | { allowed: string[] } | undefined;

/**
 * Finds the route of a method and path. Literal segments win over parameters for the same method, so
 * `POST /entities/merge` merges while `GET /entities/merge` gets an entity named merge. A path that exists under other methods
 * answers with the methods it allows (405), an unknown one with nothing (404).
 */
export function matchRoute(routes: readonly RestRoute[], method: string, path: string): RouteMatch {
  const segments = path.split('/');
  const candidates: Array<{ route: RestRoute; params: Record<string, string>; literals: number }> = [];
  for (const route of routes) {
    const pattern = route.path.split('/');
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let literals = 0;
    let matched = true;
    for (let i = 0; i < pattern.length && matched; i += 1) {
      const expected = pattern[i]!;
      const actual = segments[i]!;
      const parameter = /^\{(\w+)\}$/.exec(expected)?.[1];
      if (parameter === undefined) {
        matched = expected === actual;
        literals += 1;
      } else if (actual === '') matched = false;
      else {
        try {
          params[parameter] = decodeURIComponent(actual);
        } catch {
          matched = false;
        }
      }
    }
    if (matched) candidates.push({ route, params, literals });
  }
  if (candidates.length === 0) return undefined;
  candidates.sort((a, b) => b.literals - a.literals);
  const hit = candidates.find((c) => c.route.method === method);
  if (hit) return { route: hit.route, params: hit.params };
  return { allowed: [...new Set(candidates.map((c) => c.route.method))] };
}
