import { describe, expect, it } from 'vitest';
import { questionNames, secondHopNames } from './second-hop';

describe('secondHopNames', () => {
  const passage = 'Blue Velvet\nBlue Velvet is a 1986 mystery film written and directed by David Lynch, shot in Wilmington, North Carolina, starring Kyle MacLachlan and Laura Dern.';

  it('returns the names the passage adds to the question, in order', () => {
    expect(secondHopNames(passage, 'Who directed the film Blue Velvet, shot in North Carolina?', 10)).toEqual(['David Lynch', 'Wilmington', 'Kyle MacLachlan', 'Laura Dern']);
  });

  it('keeps particles inside names and stops at the limit', () => {
    expect(secondHopNames('Works by Ludwig van Beethoven hang in the Museum of Modern Art in New York.', 'music', 2)).toEqual(['Works', 'Ludwig van Beethoven']);
  });

  it('finds nothing in lowercase text', () => {
    expect(secondHopNames('only lowercase words here', 'anything', 5)).toEqual([]);
  });
});

describe('questionNames', () => {
  it('returns the names a question asks about, not its opening question word', () => {
    expect(questionNames('Which band was formed first, Killing Joke or Led Zeppelin?')).toEqual(['Killing Joke', 'Led Zeppelin']);
    expect(questionNames('How do I limit requests per minute?')).toEqual([]);
    expect(questionNames('Nirvana Unplugged was recorded where?')).toEqual(['Nirvana Unplugged']);
  });
});
