export * from './config';
export * from './http-api-settings';
