/** The first-run guide in Chromium on the server backend (see first-run.ts). */
import { firstRunSuite } from './first-run.js';

firstRunSuite('server');
