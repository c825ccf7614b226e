interface Connectable {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * A kafkajs producer or admin client connected on first use, so that a service that only
 * publishes never opens an admin connection, and concurrent first calls share one connect.
 */
export class LazyConnection<T extends Connectable> {
  private connecting: Promise<T> | undefined;

  constructor(private readonly create: () => T) {}

  get(): Promise<T> {
    if (this.connecting === undefined) {
      const client = this.create();
      this.connecting = client.connect().then(
        () => client,
        (error: unknown) => {
          // Forget the failed attempt: the next call tries again instead of failing forever.
          this.connecting = undefined;
          throw error;
        },
      );
    }
    return this.connecting;
  }

  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = undefined;
    const client = await connecting?.catch(() => undefined);
    await client?.disconnect();
  }
}
