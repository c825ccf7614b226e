/** The database connection under every repository: readiness probes and shutdown. */
export interface StoreConnection {
  /** Cheap connectivity check for readiness probes. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
