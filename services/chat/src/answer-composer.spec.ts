import { describe, expect, it } from 'vitest';
import type { v1 } from '@trellis/contracts';
import { LocalHashEmbedder } from '@trellis/models';
import { ExtractiveAnswerComposer } from './answer-composer';
import { answerPassages } from './answer-passages';

const hit = (text: string, i = 0): v1.ChunkHit => ({
  chunkId: `c${i}`, documentId: `d${i}`, sourceUri: `page${i}.md`, ordinal: 0, text, score: 1, signals: [], documentMetadata: {}, knowledgeBaseId: 'kb',
});

const BOOTSTRAP = ['```typescript', 'async function bootstrap() {', '  const app = await NestFactory.create(AppModule);', '  await app.listen(process.env.PORT ?? 3000);', '}', 'bootstrap();', '```'].join('\n');

describe('answerPassages', () => {
  it('keeps a fenced code block whole, as written, and splits the prose around it by sentences', () => {
    const passages = answerPassages(`The entry file starts the app. It listens on a port:\n\n${BOOTSTRAP}\n\nThen open the browser.`);
    expect(passages).toEqual([
      { text: 'The entry file starts the app.', code: false },
      { text: 'It listens on a port:', code: false },
      { text: BOOTSTRAP, code: true },
      { text: 'Then open the browser.', code: false },
    ]);
  });

  it('does not end a sentence at ?? or ?. in prose, inside inline code or inside brackets', () => {
    expect(answerPassages('Call app.listen(process.env.PORT ?? 3000) to start. Next sentence.').map((p) => p.text)).toEqual([
      'Call app.listen(process.env.PORT ?? 3000) to start.',
      'Next sentence.',
    ]);
    expect(answerPassages('Use `a ?? b` for defaults. Done here.').map((p) => p.text)).toEqual(['Use `a ?? b` for defaults.', 'Done here.']);
    expect(answerPassages('Read user?. Name with care. Done here.').map((p) => p.text)).toEqual(['Read user?. Name with care.', 'Done here.']);
    expect(answerPassages('The default is port ?? Unknown otherwise. Is it set? Yes it is.').map((p) => p.text)).toEqual([
      'The default is port ?? Unknown otherwise.',
      'Is it set?',
      'Yes it is.',
    ]);
  });

  it('quotes a table row by its cells, never a whole table as one sentence', () => {
    const table = ['|  |  |', '| --- | --- |', '| `main.ts` | The entry file of the application. |', '| `app.module.ts` | The root module. |'].join('\n');
    expect(answerPassages(`Core files:\n\n${table}`).map((p) => p.text)).toEqual(['Core files:', '`main.ts`: The entry file of the application.', '`app.module.ts`: The root module.']);
  });

  it('closes a block the chunk ended inside, and bounds a sentence an unclosed bracket would run on', () => {
    expect(answerPassages('```js\nconst a = 1;')).toEqual([{ text: '```js\nconst a = 1;\n```', code: true }]);
    const runOn = `Open ( bracket. ${'More words here. '.repeat(200)}`;
    expect(answerPassages(runOn).every((p) => p.text.length <= 1_100)).toBe(true);
    expect(answerPassages(runOn).length).toBeGreaterThan(1);
  });
});

describe('ExtractiveAnswerComposer', () => {
  const compose = async (question: string, sources: v1.ChunkHit[]) => {
    let text = '';
    for await (const piece of new ExtractiveAnswerComposer(new LocalHashEmbedder(256)).compose(question, [], sources)) text += piece;
    return text;
  };

  it('quotes a code block whole, with its newlines and indentation, never cut at ??', async () => {
    const answer = await compose('How does bootstrap call app.listen with process.env.PORT in main.ts?', [
      hit(`The main.ts file holds an async bootstrap function:\n\n${BOOTSTRAP}\n\nIt creates the app and listens on process.env.PORT.`),
    ]);
    expect(answer).toContain(`${BOOTSTRAP}\n[1]`);
    expect(answer).not.toMatch(/\?\? \[1\]/);
    // Every fence the answer opens it closes.
    expect(answer.split('\n').filter((l) => l.startsWith('```')).length % 2).toBe(0);
  });

  it('quotes a prose sentence with ?? and ?. whole', async () => {
    const answer = await compose('Which port does the app listen on?', [
      hit('The app listens on process.env.PORT ?? 3000 when started, and reads config?.port otherwise. Unrelated text about other things.'),
    ]);
    expect(answer).toContain('The app listens on process.env.PORT ?? 3000 when started, and reads config?.port otherwise. [1]');
  });
});
