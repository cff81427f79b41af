@_exported import Strata
@_exported import StrataTestKit
