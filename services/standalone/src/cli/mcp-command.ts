import type { Command } from 'commander';
import type { TrellisClient } from '@trellis/client';

type Run = (action: (client: TrellisClient, ...args: never[]) => Promise<number | void>) => (...args: unknown[]) => Promise<void>;

/**
 * `trellis mcp [--kb NAME]`: the MCP tools over stdio, for an MCP client (an editor, an agent)
 * that starts this command. Stdout is the MCP channel, so nothing else is written to it; the
 * tools call the server this CLI connects to (or, with --embedded, runs) with its key. Runs
 * until the client closes stdin.
 */
export function addMcpCommand(program: Command, run: Run): void {
  program
    .command('mcp')
    .description('serve the MCP tools search, ask, search_entities, get_entity and list_knowledge_bases over stdio')
    .option('--kb <name>', 'knowledge base the tools use when a call names none')
    // An --embedded server logs to stdout, which is the MCP channel here: it logs nothing.
    .hook('preAction', () => {
      process.env.TRELLIS_LOG_LEVEL = 'silent';
    })
    .action(
      run(async (client, opts: { kb?: string }) => {
        // Loaded when the command runs: the MCP SDK and the HTTP API cost every other command's start otherwise.
        /* eslint-disable @typescript-eslint/no-require-imports */
        const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js') as typeof import('@modelcontextprotocol/sdk/server/stdio.js');
        const { REST_API_VERSION, createMcpServer } = require('@trellis/http-api') as typeof import('@trellis/http-api');
        /* eslint-enable @typescript-eslint/no-require-imports */
        const server = createMcpServer(client, { version: REST_API_VERSION, ...(opts.kb ? { knowledgeBase: opts.kb } : {}) });
        const closed = new Promise<void>((resolve) => {
          process.stdin.once('end', resolve);
          process.stdin.once('close', resolve);
        });
        await server.connect(new StdioServerTransport());
        await closed;
        await server.close();
      }),
    );
}
