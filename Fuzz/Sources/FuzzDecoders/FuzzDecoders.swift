// libFuzzer entry point: every input goes through `DecoderEntryPoints.fuzzOne`, the decoders of what Strata
// reads from disk (records as stored and with their checksum recomputed, metadata payloads and envelopes).
// Any trap, sanitizer report or timeout is a bug; so is a decoded value that does not survive being encoded
// and decoded again (the round-trip oracle), or a record the macro model's generated decoder reads otherwise
// than the store's own; reported here with fatalError so that libFuzzer keeps the input.
@_spi(Testing) import Strata
import StrataTortureKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    if case .oracleViolation(let why) = DecoderEntryPoints.fuzzOne(input, model: FixtureModel.Wide.self) {
        fatalError("round-trip oracle: \(why)")
    }
    return 0
}
