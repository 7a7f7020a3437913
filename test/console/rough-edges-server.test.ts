/** Explore's rough edges in Chromium on the server backend (see rough-edges.ts). */
import { roughEdgesSuite } from './rough-edges.js';

roughEdgesSuite('server');
