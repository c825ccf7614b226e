export * from './adapters/http-api';
export * from './adapters/http-api-mount';
export { REST_ROUTES } from './adapters/rest-routes';
export { openApiDocument } from './adapters/openapi-document';
export { createMcpServer } from './adapters/mcp/mcp-tools';
