/** Hostile ingestion bodies on the server backend (see logs-ingest-hostile.ts). */
import { hostileBodiesSuite } from './logs-ingest-hostile.js';

hostileBodiesSuite('server');
