/** The document types Trellis can parse, by MIME type. */
export type DocumentKind = 'text' | 'markdown' | 'mdx' | 'asciidoc' | 'html' | 'pdf' | 'docx' | 'code';

/** Source files read as text, by extension, with the language they are written in. */
const LANGUAGE_BY_EXTENSION: Record<string, string> = {
  ts: 'typescript', tsx: 'tsx', mts: 'typescript', cts: 'typescript',
  js: 'javascript', jsx: 'jsx', mjs: 'javascript', cjs: 'javascript',
  py: 'python', go: 'go', java: 'java', kt: 'kotlin', scala: 'scala', rs: 'rust',
  c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', hpp: 'cpp', cs: 'csharp', swift: 'swift',
  rb: 'ruby', php: 'php', sh: 'shell', bash: 'shell', sql: 'sql', proto: 'protobuf',
  yaml: 'yaml', yml: 'yaml', toml: 'toml', graphql: 'graphql', gql: 'graphql',
};

/** Source files are typed `text/x-<language>`; a few languages have registered types too. */
const CODE_MIME: Record<string, string> = {
  ...Object.fromEntries(Object.values(LANGUAGE_BY_EXTENSION).map((language) => [`text/x-${language}`, language])),
  'text/javascript': 'javascript',
  'application/javascript': 'javascript',
  'application/typescript': 'typescript',
  'application/sql': 'sql',
  'application/yaml': 'yaml',
  'application/toml': 'toml',
  'application/graphql': 'graphql',
};

/** The language of a source file's MIME type, or undefined for any other type. */
export function languageOf(mimeType: string): string | undefined {
  return CODE_MIME[mimeType];
}

const BY_MIME: Record<string, DocumentKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/mdx': 'mdx',
  'text/asciidoc': 'asciidoc',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  ...Object.fromEntries(Object.keys(CODE_MIME).map((mime) => [mime, 'code' as const])),
};

const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  mdx: 'text/mdx',
  adoc: 'text/asciidoc',
  asciidoc: 'text/asciidoc',
  html: 'text/html',
  htm: 'text/html',
  xhtml: 'application/xhtml+xml',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  ...Object.fromEntries(Object.entries(LANGUAGE_BY_EXTENSION).map(([extension, language]) => [extension, `text/x-${language}`])),
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
