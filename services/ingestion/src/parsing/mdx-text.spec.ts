import { describe, expect, it } from 'vitest';
import { parseDocument } from './document-parser';
import { mdxToMarkdown } from './mdx-text';

const PAGE = [
  "import { Callout } from 'nextra/components'",
  "export const meta = { title: 'Deploy' }",
  '',
  '# Deploy with Helm',
  '',
  '{/* internal: keep in sync with the chart */}',
  '<Callout type="warning">Set **TRELLIS_INTERNAL_TOKEN** before you install.</Callout>',
  '',
  'Run `<Install />` once, then see <a href="/docs/helm">the chart</a>. Version {props.version}.',
  '',
  '```tsx',
  'import { Chart } from "./chart";',
  'export default () => <Chart name="trellis" />;',
  '```',
  '',
  '<Steps>',
  '### Add the repository',
  '</Steps>',
].join('\n');

describe('MDX as the markdown it holds', () => {
  it('drops module lines, JSX comments, expressions and tags; keeps text, markdown and code as written', () => {
    expect(mdxToMarkdown(PAGE)).toBe(
      [
        '',
        '# Deploy with Helm',
        '',
        '',
        'Set **TRELLIS_INTERNAL_TOKEN** before you install.',
        '',
        'Run `<Install />` once, then see the chart. Version .',
        '',
        '```tsx',
        'import { Chart } from "./chart";',
        'export default () => <Chart name="trellis" />;',
        '```',
        '',
        '',
        '### Add the repository',
        '',
      ].join('\n'),
    );
  });

  it('is parsed from .mdx files and stored as markdown, so the markdown splitter follows its headings', async () => {
    const parsed = await parseDocument(Buffer.from(PAGE), 'deploy.mdx', '');
    expect(parsed.mimeType).toBe('text/markdown');
    expect(parsed.text.startsWith('# Deploy with Helm')).toBe(true);
    expect(parsed.text).not.toContain('Callout');
    await expect(parseDocument(Buffer.from("import X from 'x'\n<X />\n"), 'empty.mdx', '')).rejects.toThrow(/contains no text/);
  });

  it('takes linear time on hostile lines', () => {
    const hostile = `${'{/* <a '.repeat(50_000)}${'{ <b '.repeat(50_000)}`;
    const started = performance.now();
    mdxToMarkdown(hostile);
    mdxToMarkdown(hostile + hostile);
    // Quadratic patterns take minutes here; linear ones milliseconds.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
