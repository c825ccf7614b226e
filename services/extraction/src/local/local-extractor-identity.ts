/**
 * What the local extractor is, for the extraction cache key: its model and the version of its
 * rules (changes whenever its output may). Kept apart from the extractor, so that the pool in
 * the main thread names it without loading the NLP model its threads run.
 */
export const LOCAL_EXTRACTOR_MODEL = 'local-compromise';
export const LOCAL_RULES_VERSION = 'rules-v4';
