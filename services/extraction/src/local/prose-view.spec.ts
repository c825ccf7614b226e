import { describe, expect, it } from 'vitest';
import { proseView, symbolName } from './prose-view';

describe('proseView', () => {
  it('blanks code, markup and admonition labels without moving any offset', () => {
    const text = '> info **Hint** Import the `Scope` enum from [the docs](/fundamentals/scopes).\n\n```ts\nconst app = await NestFactory.create(AppModule);\n```\nThen **start** it.';
    const { prose } = proseView(text);
    expect(prose).toHaveLength(text.length);
    expect(prose).not.toMatch(/Hint|NestFactory|AppModule|\*\*|`|\/fundamentals/);
    expect(prose).toContain('Import the');
    expect(prose).toContain('the docs');
    expect(prose).toContain('start');
    expect(prose.indexOf('Import')).toBe(text.indexOf('Import'));
    expect(prose.indexOf('Then')).toBe(text.indexOf('Then'));
  });

  it('turns inline code that names a symbol into a code mention at its place', () => {
    const text = 'The `ThrottlerModule` comes from `@nestjs/throttler`; call `findAll()` or set `ttl` with `limit: 10`.';
    const { codeMentions, readable } = proseView(text);
    expect(codeMentions.map((m) => m.name)).toEqual(['ThrottlerModule', '@nestjs/throttler', 'findAll']);
    const first = codeMentions[0]!;
    expect(text.slice(first.start, first.end)).toBe('ThrottlerModule');
    // What descriptions quote: the code's content in place, the backticks gone.
    expect(readable).toHaveLength(text.length);
    expect(readable.slice(first.start, first.end)).toBe('ThrottlerModule');
    expect(readable).toContain('limit: 10');
    expect(readable).not.toContain('`');
  });

  it('takes one symbol per span, and no plain words or expressions', () => {
    expect(symbolName('@Controller()')).toBe('@Controller');
    expect(symbolName('app.listen')).toBe('app.listen');
    expect(symbolName('cats')).toBeNull();
    expect(symbolName('npm i --save @nestjs/throttler')).toBeNull();
    expect(symbolName('a === b')).toBeNull();
  });
});
