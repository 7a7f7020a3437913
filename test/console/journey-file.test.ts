/** The console's whole path in Chromium on the file backend (see journey.ts). */
import { journeySuite } from './journey.js';

journeySuite('file');
