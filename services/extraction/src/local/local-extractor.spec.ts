import { describe, expect, it } from 'vitest';
import { LocalExtractor } from './local-extractor';

describe('LocalExtractor', () => {
  it('finds people, organisations and places, and links them with the verb between them', async () => {
    const result = await new LocalExtractor().extract('Marie Curie founded the Radium Institute in Paris in 1920. Later, her brother Jozef Sklodowski visited Warsaw.');
    const byName = new Map(result.entities.map((e) => [e.name, e]));
    expect(byName.get('Marie Curie')?.type).toBe('person');
    expect(byName.get('Radium Institute')?.type).toBe('organization');
    expect(byName.get('Paris')?.type).toBe('place');
    expect(byName.has('Jozef Sklodowski')).toBe(true);
    expect(byName.get('Marie Curie')?.description).toBe('Marie Curie founded the Radium Institute in Paris in 1920.');
    const founded = result.relationships.find((r) => r.source === 'Marie Curie' && r.target === 'Radium Institute');
    expect(founded).toMatchObject({ label: 'founded', strength: 8 });
    expect(result.relationships.every((r) => r.source !== r.target)).toBe(true);
  });

  it('keeps common noun phrases and unanchored words out of the graph', async () => {
    const result = await new LocalExtractor().extract('She was the first woman to do so, a few months later.');
    expect(result.entities.map((e) => e.name)).toEqual([]);
  });

  it('reads technical markdown as prose: code symbols typed code, no markup or admonitions as names', async () => {
    const text = [
      '> info **Hint** The `ThrottlerModule` comes from the `@nestjs/throttler` package, which Kamil Mysliwiec maintains.',
      '',
      '```typescript',
      'const app = await NestFactory.create(AppModule);',
      'await app.listen(process.env.PORT ?? 3000);',
      '```',
      '',
      '- Redis stores the counters',
      '- Fastify serves the routes',
    ].join('\n');
    const result = await new LocalExtractor().extract(text);
    const byName = new Map(result.entities.map((e) => [e.name, e]));
    expect(byName.get('ThrottlerModule')?.type).toBe('code');
    expect(byName.get('@nestjs/throttler')?.type).toBe('code');
    expect(byName.get('ThrottlerModule')?.description).toBe('The ThrottlerModule comes from the @nestjs/throttler package, which Kamil Mysliwiec maintains.');
    expect([...byName.keys()].some((n) => /Hint|NestFactory|AppModule|process|[`*<(]/.test(n))).toBe(false);
    expect(byName.has('Kamil Mysliwiec')).toBe(true);
    // List items are sentences of their own: Redis and Fastify are not paired across items.
    expect(result.relationships.some((r) => [r.source, r.target].includes('Redis') && [r.source, r.target].includes('Fastify'))).toBe(false);
    expect(result.relationships.find((r) => r.source === 'ThrottlerModule' && r.target === '@nestjs/throttler')?.label).toBe('comes from');
  });

  it('is deterministic', async () => {
    const text = 'Ada Lovelace worked with Charles Babbage on the Analytical Engine in London.';
    expect(await new LocalExtractor().extract(text)).toEqual(await new LocalExtractor().extract(text));
  });
});
