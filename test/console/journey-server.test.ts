/** The console's whole path in Chromium on the server backend (see journey.ts). */
import { journeySuite } from './journey.js';

journeySuite('server');
