import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { ChatModule } from './chat.module';
import { GrpcRetrievalPort } from './grpc-retrieval-port';

/** The chat service alone: retrieval is reached over gRPC at TRELLIS_RETRIEVAL_ADDRESS. */
runMain('trellis-chat', (config) =>
  startTrellisProcess({
    config,
    grpcServices: ['chat'],
    modules: () => [ChatModule.register({ retrievalPort: { useFactory: () => new GrpcRetrievalPort(config.retrievalAddress, config.internalToken) } })],
  }),
);
