import { Parser } from 'htmlparser2';
import { fenceFor } from './source-code';

/** The part of Asciidoctor.js's block API read here. */
interface AdocBlock {
  getContext(): string;
  getBlocks(): AdocBlock[];
  getTitle(): string | null;
  getStyle?(): string | null;
  getAttribute(name: string): unknown;
  getContent?(): Promise<unknown>;
  getSource?(): string;
  getItems?(): Array<AdocItem | AdocItem[]>;
  level?: number;
  rows?: { head: AdocCell[][]; body: AdocCell[][]; foot: AdocCell[][] };
}

interface AdocItem {
  getText(): string | null;
  getBlocks(): AdocBlock[];
}

interface AdocCell {
  getText(): string | null;
}

/* eslint-disable-next-line @typescript-eslint/no-require-imports */
const asciidoctor = () => require('@asciidoctor/core') as { load(input: string, options: Record<string, unknown>): Promise<AdocBlock> };

/**
 * An AsciiDoc document as the markdown Trellis chunks: parsed by Asciidoctor.js in secure
 * mode (no includes, no file or network access), then written back block by block —
 * sections as headings, listings as fenced code with their language, lists as items, tables
 * as pipe rows, admonitions as "Note: …", inline markup as its text.
 */
export async function asciidocMarkdown(source: string): Promise<string> {
  const document = await asciidoctor().load(source, { safe: 'secure', attributes: { 'allow-uri-read': null } });
  const title = document.getTitle();
  const lines = title ? [`# ${inlineText(title)}`, ''] : [];
  for (const block of document.getBlocks()) lines.push(...(await blockMarkdown(block)));
  return lines.join('\n');
}

async function blockMarkdown(block: AdocBlock): Promise<string[]> {
  const context = block.getContext();
  const children = async () => (await Promise.all(block.getBlocks().map(blockMarkdown))).flat();
  const caption = block.getTitle() ? [inlineText(block.getTitle()!), ''] : [];
  switch (context) {
    case 'section':
      return [`${'#'.repeat(Math.min(6, (block.level ?? 1) + 1))} ${inlineText(block.getTitle() ?? '')}`, '', ...(await children())];
    case 'paragraph':
      return [...caption, inlineText(String((await block.getContent?.()) ?? '')), ''];
    case 'admonition': {
      const label = (block.getStyle?.() ?? 'note').toLowerCase();
      const body = block.getBlocks().length > 0 ? (await children()).join('\n').trim() : inlineText(String((await block.getContent?.()) ?? ''));
      return [`${label.charAt(0).toUpperCase()}${label.slice(1)}: ${body}`, ''];
    }
    case 'listing':
    case 'literal': {
      const code = block.getSource?.() ?? '';
      const language = String(block.getAttribute('language') ?? '');
      const fence = fenceFor(code);
      return [...caption, `${fence}${language}`, code, fence, ''];
    }
    case 'ulist':
    case 'olist':
    case 'colist': {
      const lines: string[] = [...caption];
      for (const [index, item] of (block.getItems?.() ?? []).entries()) {
        if (Array.isArray(item)) continue;
        lines.push(`${context === 'ulist' ? '-' : `${index + 1}.`} ${inlineText(item.getText() ?? '')}`);
        for (const nested of item.getBlocks()) lines.push(...(await blockMarkdown(nested)).map((l) => (l === '' ? l : `  ${l}`)));
      }
      return [...lines, ''];
    }
    case 'dlist': {
      const lines: string[] = [...caption];
      for (const entry of block.getItems?.() ?? []) {
        if (!Array.isArray(entry)) continue;
        const [terms, description] = entry as unknown as [AdocItem[], AdocItem | null];
        lines.push(`- ${terms.map((t) => inlineText(t.getText() ?? '')).join(', ')}: ${description ? inlineText(description.getText() ?? '') : ''}`.trimEnd());
      }
      return [...lines, ''];
    }
    case 'table': {
      const rows = block.rows;
      if (!rows) return [];
      const row = (cells: AdocCell[]) => `| ${cells.map((c) => inlineText(c.getText() ?? '').replace(/\|/g, '\\|')).join(' | ')} |`;
      const head = rows.head.map(row);
      const body = [...rows.body, ...rows.foot].map(row);
      const width = (rows.head[0] ?? rows.body[0] ?? []).length;
      const delimiter = head.length > 0 ? [`|${' --- |'.repeat(width)}`] : [];
      return [...caption, ...head, ...delimiter, ...body, ''];
    }
    case 'image':
    case 'video':
    case 'audio':
    case 'toc':
    case 'page_break':
    case 'thematic_break':
      return [];
    case 'pass':
      return [inlineText(block.getSource?.() ?? ''), ''];
    default:
      // Quotes, examples, sidebars, open blocks: their caption, then what they hold.
      return [...caption, ...(await children())];
  }
}

/** The text of converted inline markup (`<strong>npm</strong>` → `npm`), entities decoded, inline code kept as code. */
function inlineText(html: string): string {
  let text = '';
  const tick = (name: string) => {
    if (name === 'code') text += '`';
  };
  const parser = new Parser({ ontext: (t) => (text += t), onopentag: tick, onclosetag: tick }, { decodeEntities: true });
  parser.write(html);
  parser.end();
  return text.replace(/\s+/g, ' ').trim();
}
