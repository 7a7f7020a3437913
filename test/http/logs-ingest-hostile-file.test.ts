/** Hostile ingestion bodies on the file backend (see logs-ingest-hostile.ts). */
import { hostileBodiesSuite } from './logs-ingest-hostile.js';

hostileBodiesSuite('file');
