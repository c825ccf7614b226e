/**
 * robots.txt as RFC 9309 reads it: groups of `user-agent` lines followed by `allow` and
 * `disallow` rules; a crawler obeys the group naming its product token, else the `*` group.
 * A path is allowed unless its longest matching rule is a disallow (an allow wins a tie);
 * `*` in a rule matches any characters and a final `$` anchors it at the end. The
 * non-standard `crawl-delay` is read too, as the least delay between two requests.
 */
export interface RobotsRules {
  allows(url: URL): boolean;
  /** Seconds between requests the site asks for, or null. */
  readonly crawlDelaySeconds: number | null;
}

interface Rule {
  readonly allow: boolean;
  readonly pattern: RegExp;
  readonly length: number;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelay: number | null;
}

/** Rules that allow everything: no robots.txt, or one that cannot be read as rules (RFC 9309 §2.3.1.3). */
export const ALLOW_ALL: RobotsRules = { allows: () => true, crawlDelaySeconds: null };
/** Rules that allow nothing: the site's robots.txt is unreachable (a 5xx), so it must be assumed to forbid. */
export const DISALLOW_ALL: RobotsRules = { allows: () => false, crawlDelaySeconds: null };

/** The longest robots.txt read; RFC 9309 asks crawlers to read at least 500 KiB. */
export const MAX_ROBOTS_BYTES = 512 * 1024;

export function parseRobots(text: string, userAgent: string): RobotsRules {
  const groups: Group[] = [];
  let current: Group | null = null;
  let lastWasAgent = false;
  for (const raw of text.slice(0, MAX_ROBOTS_BYTES).split(/\r?\n|\r/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!lastWasAgent || current === null) {
        current = { agents: [], rules: [], crawlDelay: null };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (current === null) continue;
    if (key === 'allow' || key === 'disallow') {
      // An empty disallow allows everything; an empty allow says nothing.
      if (value === '') continue;
      current.rules.push({ allow: key === 'allow', pattern: rulePattern(value), length: value.length });
    } else if (key === 'crawl-delay') {
      const seconds = Number(value);
      if (Number.isFinite(seconds) && seconds >= 0) current.crawlDelay = seconds;
    }
  }
  const token = userAgent.toLowerCase();
  const mine = groups.filter((g) => g.agents.some((a) => a !== '*' && token.startsWith(a)));
  const chosen = mine.length > 0 ? mine : groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  const delays = chosen.map((g) => g.crawlDelay).filter((d): d is number => d !== null);
  return {
    crawlDelaySeconds: delays.length > 0 ? Math.max(...delays) : null,
    allows(url: URL): boolean {
      const path = `${url.pathname}${url.search}`;
      let best: Rule | null = null;
      for (const rule of rules) {
        if (!rule.pattern.test(path)) continue;
        if (best === null || rule.length > best.length || (rule.length === best.length && rule.allow)) best = rule;
      }
      return best === null || best.allow;
    },
  };
}

function rulePattern(rule: string): RegExp {
  const anchored = rule.endsWith('$');
  const body = (anchored ? rule.slice(0, -1) : rule)
    .split('*')
    .map((part) => encodePath(part).replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
}

/** A rule's path in the form URL paths arrive in (percent-encoded), its own escapes kept. */
function encodePath(part: string): string {
  return part.replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase()).replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}
