import { markdownWithoutHtml } from './markdown-html';
import { mdxToMarkdown } from './mdx-text';

/** The markdown a markdown or MDX upload is stored as: its HTML (and MDX's JSX) reduced to text. */
export function storedMarkdown(kind: 'markdown' | 'mdx', decoded: string): string {
  return markdownWithoutHtml(kind === 'mdx' ? mdxToMarkdown(decoded) : decoded);
}
