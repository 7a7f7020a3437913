/** The route fuzz on the file backend (see fuzz-routes.ts). */
import { fuzzRoutesSuite } from './fuzz-routes.js';

fuzzRoutesSuite('file');
