"""Provider names whose keys carry no prefix of their own (a bare 32-hex or base36
string): such a value is a likely secret only beside its provider's name, the way
trufflehog's keyword detectors (pkg/detectors/<name>) and secrets-patterns-db's
contextual rules judge it.  Data only: secret_rules.py reads NAMES.
"""

NAMES = (
    "abstract abuseipdb abyssale accuweather airbrake airvisual alconost aletheiaapi alienvault allsports "
    "ambee api2cart apiflash asana atlassian audd autoklose aws azure beebole besnappy besttime betterstack "
    "bitbar bitcoinaverage blazemeter blocknative brandfetch bscscan buildkite canny chatbot checio clearbit "
    "clickup clockify cloudsmith clustdoc codacy codeclimate coinlib collect2 commodities convertapi cosmos "
    "courier data.gov deepseek delighted disqus dropbox enablex eraser fixer formcraft geckoboard guardian "
    "harness ibm instamojo ip2location karma keen linenotify luno m3o manifest mapquest mesibo moralis "
    "netlify newscatcher paypal pepipost salesblink softlayer statuspage tickettailor"
).split()
