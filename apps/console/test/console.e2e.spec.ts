import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { launchBrowser } from './browser';
import type { Browser } from './browser';

const ROOT = resolve(__dirname, '../../..');
const EXAMPLES = join(ROOT, 'examples');
const SCREENSHOTS = join(ROOT, 'docs/screenshots');
const KEY = 'console-e2e-key';
const STEP_MS = 60_000;
/** Room for every file of examples/, not for the oversized one the test drops too. */
const MAX_UPLOAD = 16_000;
/** Each step: its waits are bounded by STEP_MS, this bounds the step. */
const TEST_MS = 180_000;

/**
 * The web console in a real browser (Debian's chromium, headless, driven by playwright-core)
 * against the built standalone server, which serves it at `/`, with an API key required: each
 * step goes through the UI the way a person would, and each page is photographed for the README.
 */
describe('web console', () => {
  let server: StandaloneProcess;
  let browser: Browser;
  let page: Page;
  let work: string;
  const pageErrors: string[] = [];

  /** fetch, again while the server sheds the call (429 with Retry-After: a busy machine at start-up). */
  const fetchPatiently = async (url: string): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(url);
      if (response.status !== 429 || attempt >= 20) return response;
      await new Promise((r) => setTimeout(r, 1000 * Number(response.headers.get('retry-after') ?? 1)));
    }
  };
  const shoot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
  const go = async (title: string) => {
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: title }).click();
    await page.getByRole('heading', { name: title, exact: true }).first().waitFor({ timeout: STEP_MS });
  };

  beforeAll(async () => {
    // The browser first: a machine that cannot start it fails here, before anything else runs.
    browser = await launchBrowser();
    server = await startStandaloneProcess({ env: { TRELLIS_API_KEYS: `${KEY}=default`, TRELLIS_INTERNAL_TOKEN: 'a-long-internal-secret-for-the-console-test', TRELLIS_EMBEDDINGS: 'hash', TRELLIS_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) } });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(STEP_MS);
    page.on('pageerror', (error) => {
      pageErrors.push(error.message);
      process.stderr.write(`console page error: ${error.stack ?? error.message}\n`);
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
    work = mkdtempSync(join(tmpdir(), 'trellis-console-e2e-'));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  }, TEST_MS);

  it('is served at / with the app routes answered by index.html, beside the API', async () => {
    for (const path of ['/', '/graph', '/knowledge-bases']) {
      const response = await fetchPatiently(`${server.httpUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await response.text()).toContain('<div id="root">');
    }
    const api = await fetchPatiently(`${server.httpUrl}/api/v1/knowledge-bases`);
    expect(api.status).toBe(401);
  }, TEST_MS);

  it('shows the 401 message of a missing or wrong API key, then works with the right one', async () => {
    await page.goto(`${server.httpUrl}/knowledge-bases`);
    const alert = page.getByRole('alert').first();
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/401 Unauthorized[\s\S]*a valid API key is required/);
    await page.getByLabel('API key').fill('not-the-key');
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByText('key set').waitFor();
    await page.getByRole('alert').first().waitFor();
    expect(await page.getByRole('alert').first().innerText()).toMatch(/401 Unauthorized[\s\S]*a valid API key is required/);
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByText('None yet: create the first one below.').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
  }, TEST_MS);

  it('creates a knowledge base, takes the examples by drag-and-drop with per-file progress, and shows them indexed', async () => {
    const form = page.getByRole('form', { name: 'New knowledge base' });
    await form.getByLabel('Name').fill('curie');
    await form.getByLabel('Description').fill('The examples folder');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'curie', exact: true }).waitFor();

    const files = readdirSync(EXAMPLES).sort().map((name) => ({ name, base64: readFileSync(join(EXAMPLES, name)).toString('base64') }));
    // A real drop event carrying the files, as a drag from the desktop delivers it (browser-side code as a string: this file compiles without the DOM library).
    await page.evaluate(`(() => {
      const transfer = new DataTransfer();
      for (const f of ${JSON.stringify(files)}) transfer.items.add(new File([Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0))], f.name));
      document.querySelector('[data-testid=dropzone]').dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    })()`);
    await expect.poll(() => page.getByTestId('upload-item').filter({ hasText: 'uploaded' }).count(), { timeout: STEP_MS }).toBe(files.length);
    expect(await page.getByRole('progressbar').count()).toBe(files.length);

    await expect.poll(() => page.locator('[data-testid=document-row][data-status=graphed]').count(), { timeout: STEP_MS, interval: 500 }).toBe(files.length);
    const rows = await page.getByTestId('document-row').allInnerTexts();
    for (const f of files) expect(rows.some((r) => r.includes(f.name))).toBe(true);
    // Stage timings of each document are on its row.
    expect(rows.every((r) => /ingestion \d[\d,]* ms/.test(r) && /graph \d[\d,]* ms/.test(r))).toBe(true);
    // The status filter asks the server for one status only.
    await page.getByLabel('Only documents in status').selectOption('INDEX_STATUS_FAILED');
    await page.getByText('No failed documents.').waitFor();
    await page.getByLabel('Only documents in status').selectOption('');
    await expect.poll(() => page.getByTestId('document-row').count()).toBe(files.length);

    // A file over the server's limit: refused with 413 before its body is read, and the message shown on its row.
    await page.getByLabel('choose files').setInputFiles({ name: 'too-big.txt', mimeType: 'text/plain', buffer: Buffer.alloc(MAX_UPLOAD + 100_000, 'a') });
    const refused = page.getByTestId('upload-item').filter({ hasText: 'too-big.txt' });
    await refused.getByRole('alert').waitFor();
    expect(await refused.getByRole('alert').innerText()).toMatch(/413 Content Too Large[\s\S]*is larger than/);
    await page.evaluate('window.scrollTo(0, 0)');
    await shoot('knowledge-bases');
  }, TEST_MS);

  it('streams a cited answer with its stages, and opens the cited chunk in its document', async () => {
    await go('Chat');
    await page.getByLabel('curie').check();
    await page.getByLabel('Question').fill('Who discovered piezoelectricity?');
    await page.getByLabel('Question').press('Enter');
    const answer = page.getByTestId('answer-curie');
    await page.locator('[data-testid=answer-curie][aria-busy=false]').waitFor();
    const text = await answer.locator('.answer').innerText();
    expect(text).toMatch(/Pierre Curie/);
    expect(text).toMatch(/\[1\]/);
    const stages = await answer.getByRole('list', { name: 'Stages' }).getByRole('listitem').allInnerTexts();
    expect(stages).toEqual(['graph', 'refine', 'chunks', 'answer']);
    // The sentence that answers comes from Pierre Curie's page.
    const citation = answer.locator('.citations').getByRole('button', { name: 'pierre-curie.html' });
    expect(await citation.count()).toBe(1);
    await citation.click();
    const viewer = page.getByTestId('chunk-viewer');
    await viewer.locator('[data-cited=true]').waitFor();
    expect(await viewer.getByRole('heading').first().innerText()).toBe('pierre-curie.html');
    expect(await viewer.locator('[data-cited=true]').innerText()).toMatch(/discovered piezoelectricity/);
    await answer.getByText('Graph context used').click();
    await answer.getByTestId('graph-context').waitFor();
    expect(await answer.getByTestId('graph-context').locator('tbody tr').count()).toBeGreaterThan(0);
    await page.evaluate('window.scrollTo(0, 0)');
    await shoot('chat');

    // A follow-up continues the conversation: a second turn, answered the same way.
    await page.getByLabel('Question').fill('Where was Pierre Curie born?');
    await page.getByLabel('Question').press('Enter');
    await expect.poll(() => page.locator('[data-testid=answer-curie][aria-busy=false]').count()).toBe(2);
    expect(await page.getByTestId('answer-curie').nth(1).locator('.answer').innerText()).toMatch(/Paris/);
    expect(await page.getByRole('alert').count()).toBe(0);

    // The conversation was saved on the server: it is listed, and opening it shows both turns again.
    const saved = page.getByRole('region', { name: 'Saved conversations' });
    const entry = saved.getByRole('button', { name: /^Who discovered piezo/ });
    await entry.waitFor();
    const conversations = page.locator('aside .history').first().getByRole('button');
    expect(await conversations.count()).toBe(1);
    await entry.click();
    // Opened as a conversation of its own, current, with both saved turns and no stages (nothing streamed).
    await expect.poll(() => conversations.count()).toBe(2);
    expect(await conversations.nth(1).getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByTestId('answer-curie').count()).toBe(2);
    expect(await page.getByTestId('answer-curie').nth(0).locator('.answer').innerText()).toMatch(/Pierre Curie/);
    expect(await page.getByTestId('answer-curie').nth(1).locator('.answer').innerText()).toMatch(/Paris/);
  }, TEST_MS);

  it("opens an entity's graph, merges two entities and undoes the merge, sets a weight and writes a synopsis", async () => {
    await go('Graph explorer');
    await page.getByLabel('Entity', { exact: true }).fill('Curie');
    await page.getByRole('button', { name: 'Search' }).click();
    const found = page.getByRole('list', { name: 'Entities found' });
    await found.getByRole('button', { name: 'Pierre Curie', exact: true }).click();
    await page.getByRole('heading', { name: /^Pierre Curie/ }).waitFor();
    const canvas = page.getByTestId('graph-canvas');
    await canvas.locator('canvas').first().waitFor();
    expect(await canvas.getAttribute('aria-label')).toMatch(/^Graph of Pierre Curie and [1-9]\d* neighbours$/);
    expect(await page.getByRole('region', { name: 'Relationships' }).locator('.hit').count()).toBeGreaterThan(0);

    await found.getByRole('button', { name: 'Curies', exact: true }).click();
    await page.getByRole('heading', { name: /^Curies/ }).waitFor();

    await page.getByLabel('Merge Curies into').selectOption({ label: 'Marie Curie' });
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    await page.getByRole('heading', { name: /^Marie Curie/ }).waitFor();
    const merge = page.locator('[data-testid=edit-row][data-action=merge-entities]');
    await merge.waitFor();
    expect(await merge.getAttribute('data-undone')).toBe('false');
    await expect.poll(async () => (await found.getByRole('button').allInnerTexts()).includes('Curies')).toBe(false);

    await merge.getByRole('button', { name: 'Undo' }).click();
    await page.locator('[data-testid=edit-row][data-action=merge-entities][data-undone=true]').waitFor();
    await expect.poll(async () => (await found.getByRole('button').allInnerTexts()).includes('Curies')).toBe(true);
    await found.getByRole('button', { name: 'Pierre Curie', exact: true }).click();
    await page.getByRole('heading', { name: /^Pierre Curie/ }).waitFor();
    await canvas.locator('canvas').first().waitFor();

    // Set a relationship's weight and write a synopsis: both land in the edit log.
    const relationship = page.getByRole('region', { name: 'Relationships' }).locator('.hit').first();
    await relationship.getByRole('spinbutton').fill('7.5');
    await relationship.getByRole('button', { name: 'Set weight' }).click();
    await page.locator('[data-testid=edit-row][data-action=update-relationship]').waitFor();
    expect(await page.getByRole('region', { name: 'Relationships' }).getByRole('spinbutton').evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value))).toContain('7.5');
    const synopsis = page.getByRole('form', { name: 'Synopsis' });
    await synopsis.getByLabel('Name').fill('The Curie family');
    await synopsis.getByLabel('Description').fill('Pierre Curie and the people around him.');
    await synopsis.getByRole('button', { name: 'Create synopsis' }).click();
    await page.getByRole('heading', { name: /^The Curie family/ }).waitFor();
    await page.locator('[data-testid=edit-row][data-action=create-synopsis]').waitFor();
    await found.getByRole('button', { name: 'Pierre Curie', exact: true }).click();
    await page.getByRole('heading', { name: /^Pierre Curie/ }).waitFor();
    await canvas.locator('canvas').first().waitFor();
    await shoot('graph');
  }, TEST_MS);

  it('puts the retrieval modes side by side, each hit with its signals', async () => {
    await go('Retrieval playground');
    await page.getByLabel('Question').fill('Which elements did Marie Curie discover?');
    await page.getByRole('button', { name: 'Retrieve' }).click();
    for (const mode of ['vector', 'fulltext', 'graph', 'hybrid']) {
      const column = page.getByTestId(`mode-${mode}`);
      await column.locator('.hit').first().waitFor();
      expect(await column.getByRole('alert').count(), mode).toBe(0);
    }
    expect(await page.getByTestId('mode-hybrid').locator('.signals').first().innerText()).toMatch(/(vector|fulltext|graph) \d/);
    await shoot('playground');
  }, TEST_MS);

  it('runs an evaluation of an uploaded gold set and shows the metrics table', async () => {
    const questions = join(work, 'questions.jsonl');
    writeFileSync(
      questions,
      [
        { id: 'q1', question: 'Who discovered piezoelectricity?', gold: ['pierre-curie.html'] },
        { id: 'q2', question: 'Which element is named after Poland?', gold: ['polonium.txt'] },
        { id: 'q3', question: 'Who won the Nobel Prize in Chemistry in 1935 for artificial radioactivity?', gold: ['irene-joliot-curie.md'] },
      ]
        .map((q) => JSON.stringify(q))
        .join('\n'),
    );
    await go('Evaluations');
    await page.getByLabel('Questions (jsonl)').setInputFiles(questions);
    await page.getByLabel('k (comma-separated)').fill('1,5');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    const table = page.getByTestId('eval-table');
    await table.waitFor();
    expect(await table.locator('thead th').allInnerTexts()).toEqual(['Mode', 'R@1', 'R@5', 'MRR', 'p50 ms', 'p95 ms']);
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows.map((r) => r.split('\t')[0])).toEqual(['default', 'vector', 'hybrid']);
    // Five documents and k = 5: vector search ranks every chunk, so each gold passage is among its first five.
    expect(rows[1]!.split('\t')[2]).toBe('100.0');
    for (const row of rows) expect(row.split('\t').slice(1).every((cell) => /^\d+\.\d+$/.test(cell))).toBe(true);
    await shoot('evaluations');

    // With a corpus file the passages go into a new knowledge base first (source URI = passage id), as `trellis eval` does.
    const corpus = join(work, 'corpus.jsonl');
    const passages = [
      { id: 'p-curie', title: 'Curie', text: 'Pierre Curie and his brother Jacques Curie discovered piezoelectricity in 1880.' },
      { id: 'p-polonium', title: 'Polonium', text: 'Polonium was named after Poland, the native country of Marie Curie.' },
      { id: 'p-radium', title: 'Radium Institute', text: 'The Radium Institute in Paris was founded in 1909 by the University of Paris and the Pasteur Institute.' },
    ];
    writeFileSync(corpus, passages.map((p) => JSON.stringify(p)).join('\n'));
    writeFileSync(questions, [{ id: 'c1', question: 'Which country is polonium named after?', gold: ['p-polonium'] }, { id: 'c2', question: 'When was the Radium Institute founded?', gold: ['p-radium'] }].map((q) => JSON.stringify(q)).join('\n'));
    await page.getByLabel('Questions (jsonl)').setInputFiles(questions);
    await page.getByLabel('Corpus (jsonl, optional)').setInputFiles(corpus);
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    await page.getByRole('heading', { name: /^2 questions on eval-\d{14}$/ }).waitFor();
    const corpusRows = await table.locator('tbody tr').allInnerTexts();
    expect(corpusRows).toHaveLength(3);
    for (const row of corpusRows) expect(row.split('\t')[2]).toBe('100.0');
    expect(pageErrors).toEqual([]);
  }, TEST_MS);
});
