/** The document types Trellis can parse, by MIME type. */
export type DocumentKind = 'text' | 'markdown' | 'mdx' | 'html' | 'pdf' | 'docx';

const BY_MIME: Record<string, DocumentKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/mdx': 'mdx',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
};

const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  mdx: 'text/mdx',
  html: 'text/html',
  htm: 'text/html',
  xhtml: 'application/xhtml+xml',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export const SUPPORTED_EXTENSIONS = Object.keys(BY_EXTENSION);

/** The MIME type to parse a file as: the given one when meaningful, else by extension. */
export function resolveMimeType(filename: string, declared: string): string | undefined {
  const mime = declared.split(';')[0]!.trim().toLowerCase();
  if (mime !== '' && mime !== 'application/octet-stream' && BY_MIME[mime] !== undefined) return mime;
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : BY_EXTENSION[extension];
}

export function kindOf(mimeType: string): DocumentKind | undefined {
  return BY_MIME[mimeType];
}
