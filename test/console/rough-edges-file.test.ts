/** Explore's rough edges in Chromium on the file backend (see rough-edges.ts). */
import { roughEdgesSuite } from './rough-edges.js';

roughEdgesSuite('file');
