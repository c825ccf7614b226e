import { describe, expect, it } from 'vitest';
import { routeQuestion } from './question-router';

describe('routeQuestion', () => {
  it('routes corpus-wide questions global and names the cue', () => {
    expect(routeQuestion('What are the main themes of these documents?', 3)).toEqual({ route: 'global', reason: 'corpus-wide cue "main themes"' });
    expect(routeQuestion('Which teams are involved across all incidents?', 3)).toEqual({ route: 'global', reason: 'corpus-wide cue "across all"' });
    expect(routeQuestion('Overall, what kinds of music appear?', 3).route).toBe('global');
    expect(routeQuestion('Give me an overview of the collection', 3).route).toBe('global');
  });

  it('keeps questions about something in the corpus local, and everything local without communities', () => {
    expect(routeQuestion('Who directed the Radium Institute?', 3)).toEqual({ route: 'local', reason: 'no corpus-wide cue: a question about something in the corpus' });
    expect(routeQuestion('In which year was the band formed?', 3).route).toBe('local');
    expect(routeQuestion('What are the main themes?', 0)).toEqual({ route: 'local', reason: 'no communities built for this knowledge base' });
  });
});
